"""Bitwise (OpenVINO spec category `bitwise`): element-wise operations on the bits of integers."""
