"""Detection: boxes, regions of interest, priors and proposals (OpenVINO's detection category)."""
