"""Shape (OpenVINO spec category `shape`): Reshape, Squeeze, Unsqueeze."""
