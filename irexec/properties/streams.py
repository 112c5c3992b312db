"""OpenVINO's ``openvino.properties.streams``: ``num`` and ``Num`` (AUTO, NUMA)."""

from irexec.properties._property import Property
from irexec.runtime.properties import StreamsNum as Num

num = Property("NUM_STREAMS")

__all__ = ["Num", "num"]
