"""Pooling (OpenVINO spec category `pooling`): one value per window of the data."""
