"""Sequence processing (OpenVINO spec category `sequence`): recurrent cells and sequences, OneHot, attention."""
