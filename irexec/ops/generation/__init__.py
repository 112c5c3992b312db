"""Generation (OpenVINO spec category `generation`): Range, Eye."""
