"""OpenVINO's ``openvino.properties.intel_cpu``: accepted and reported, no effect here."""

from irexec.properties._property import Property

denormals_optimization = Property("CPU_DENORMALS_OPTIMIZATION")
sparse_weights_decompression_rate = Property("CPU_SPARSE_WEIGHTS_DECOMPRESSION_RATE")

__all__ = ["denormals_optimization", "sparse_weights_decompression_rate"]
