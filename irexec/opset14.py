"""OpenVINO's ``openvino.opset14`` functions, building irexec layers (see irexec/opsets/)."""

from irexec.opsets.functions import populate

populate(globals(), 14)
