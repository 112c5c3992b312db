"""Convolution (OpenVINO spec category `convolution`): windows of the data times learned weights."""
