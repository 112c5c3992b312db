"""OpenVINO's ``openvino.properties``: each property a name that is also a function
(``num_streams()`` is ``"NUM_STREAMS"``, ``num_streams(4)`` the pair ``("NUM_STREAMS", 4)`` a
config takes), in the same submodules (``hint``, ``streams``, ``device``, ``log``,
``intel_cpu``). What irexec does with each: irexec/runtime/properties.py and docs/api.md."""

from __future__ import annotations

from irexec.properties._property import Property
from irexec.runtime.properties import CacheMode, WorkloadType

from irexec.properties import device, hint, intel_cpu, log, streams  # noqa: E402

available_devices = Property("AVAILABLE_DEVICES")
cache_dir = Property("CACHE_DIR")
cache_mode = Property("CACHE_MODE")
compilation_num_threads = Property("COMPILATION_NUM_THREADS")
enable_mmap = Property("ENABLE_MMAP")
enable_profiling = Property("PERF_COUNT")
execution_devices = Property("EXECUTION_DEVICES")
inference_num_threads = Property("INFERENCE_NUM_THREADS")
key_cache_precision = Property("KEY_CACHE_PRECISION")
loaded_from_cache = Property("LOADED_FROM_CACHE")
model_name = Property("NETWORK_NAME")
num_streams = Property("NUM_STREAMS")
optimal_number_of_infer_requests = Property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")
range_for_async_infer_requests = Property("RANGE_FOR_ASYNC_INFER_REQUESTS")
range_for_streams = Property("RANGE_FOR_STREAMS")
supported_properties = Property("SUPPORTED_PROPERTIES")
value_cache_precision = Property("VALUE_CACHE_PRECISION")
workload_type = Property("WORKLOAD_TYPE")

__all__ = [
    "CacheMode", "Property", "WorkloadType", "available_devices", "cache_dir", "cache_mode",
    "compilation_num_threads", "device", "enable_mmap", "enable_profiling", "execution_devices",
    "hint", "inference_num_threads", "intel_cpu", "key_cache_precision", "loaded_from_cache",
    "log", "model_name", "num_streams", "optimal_number_of_infer_requests",
    "range_for_async_infer_requests", "range_for_streams", "streams", "supported_properties",
    "value_cache_precision", "workload_type",
]
