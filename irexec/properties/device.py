"""OpenVINO's ``openvino.properties.device``: what irexec reports about its one device."""

from irexec.properties._property import Property

architecture = Property("DEVICE_ARCHITECTURE")
capabilities = Property("OPTIMIZATION_CAPABILITIES")
full_name = Property("FULL_DEVICE_NAME")
id = Property("DEVICE_ID")  # noqa: A001  (OpenVINO's name)
priorities = Property("MULTI_DEVICE_PRIORITIES")
properties = Property("DEVICE_PROPERTIES")
type = Property("DEVICE_TYPE")  # noqa: A001  (OpenVINO's name)

__all__ = ["architecture", "capabilities", "full_name", "id", "priorities", "properties", "type"]
