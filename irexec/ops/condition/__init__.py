"""Control flow (OpenVINO spec category `condition`): If, Select."""
