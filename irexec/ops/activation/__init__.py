"""Activation functions (OpenVINO spec category `activation`)."""
