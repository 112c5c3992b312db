"""OpenVINO's ``openvino.opset17`` functions, building irexec layers (see irexec/opsets/).
OpenVINO's opset17 is partial: it holds only the ops new in it."""

from irexec.opsets.functions import populate

populate(globals(), 17)
