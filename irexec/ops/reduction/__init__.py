"""Reductions (OpenVINO spec category `reduction`): one value per slice along some axes."""
