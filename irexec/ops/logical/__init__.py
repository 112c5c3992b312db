"""Logical (OpenVINO spec category `logical`): element-wise boolean algebra."""
