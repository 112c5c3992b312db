"""Comparison (OpenVINO spec category `comparison`): element-wise tests giving booleans."""
