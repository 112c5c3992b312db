"""Image processing (OpenVINO spec category `image`)."""
