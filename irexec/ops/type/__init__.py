"""Type conversion (OpenVINO spec category `type`): Convert and its kin."""
