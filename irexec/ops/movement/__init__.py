"""Data movement (OpenVINO spec category `movement`): ops whose outputs are copies of input elements."""
