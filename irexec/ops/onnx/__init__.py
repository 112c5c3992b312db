"""ONNX ops (version family `onnx`), as read from ONNX models; `irexec convert` writes each with OpenVINO ops."""
