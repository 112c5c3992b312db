"""Quantization (OpenVINO spec category `quantization`): FakeQuantize, FakeConvert."""
