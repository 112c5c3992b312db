"""OpenVINO's ``openvino.properties.log``: ``level`` (accepted; irexec logs nothing)."""

from irexec.properties._property import Property
from irexec.runtime.properties import LogLevel as Level

level = Property("LOG_LEVEL")

__all__ = ["Level", "level"]
