"""Shape (OpenVINO spec category `shape`): ShapeOf, Reshape, Squeeze, Unsqueeze."""
