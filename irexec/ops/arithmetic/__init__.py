"""Arithmetic (OpenVINO spec category `arithmetic`): element-wise math."""
