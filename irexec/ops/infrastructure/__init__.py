"""Infrastructure (OpenVINO spec category `infrastructure`): Parameter, Constant, Result."""
