"""Normalization (OpenVINO spec category `normalization`): values scaled by statistics of their neighbours."""
