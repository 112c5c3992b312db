"""Condition (OpenVINO spec category `condition`): If, Select, NonZero, Bucketize."""
