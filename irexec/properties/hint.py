"""OpenVINO's ``openvino.properties.hint``: hints irexec accepts and reports back (only
``inference_precision`` f64 changes how it runs: precise mode)."""

from irexec.properties._property import Property
from irexec.runtime.properties import (ExecutionMode, ModelDistributionPolicy, PerformanceMode,
                                       Priority, SchedulingCoreType)

activations_scale_factor = Property("ACTIVATIONS_SCALE_FACTOR")
allow_auto_batching = Property("ALLOW_AUTO_BATCHING")
dynamic_quantization_group_size = Property("DYNAMIC_QUANTIZATION_GROUP_SIZE")
enable_cpu_pinning = Property("ENABLE_CPU_PINNING")
enable_cpu_reservation = Property("ENABLE_CPU_RESERVATION")
enable_hyper_threading = Property("ENABLE_HYPER_THREADING")
execution_mode = Property("EXECUTION_MODE_HINT")
inference_precision = Property("INFERENCE_PRECISION_HINT")
kv_cache_precision = Property("KV_CACHE_PRECISION")
model_distribution_policy = Property("MODEL_DISTRIBUTION_POLICY")
model_priority = Property("MODEL_PRIORITY")
num_requests = Property("PERFORMANCE_HINT_NUM_REQUESTS")
performance_mode = Property("PERFORMANCE_HINT")
scheduling_core_type = Property("SCHEDULING_CORE_TYPE")

__all__ = [
    "ExecutionMode", "ModelDistributionPolicy", "PerformanceMode", "Priority",
    "SchedulingCoreType", "activations_scale_factor", "allow_auto_batching",
    "dynamic_quantization_group_size", "enable_cpu_pinning", "enable_cpu_reservation",
    "enable_hyper_threading", "execution_mode", "inference_precision", "kv_cache_precision",
    "model_distribution_policy", "model_priority", "num_requests", "performance_mode",
    "scheduling_core_type",
]
