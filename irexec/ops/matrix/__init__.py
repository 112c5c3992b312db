"""Matrix operations (OpenVINO spec category `matrix`)."""
