"""OpenVINO's properties, for the one device irexec has: what ``compile_model(..., config)``,
``Core.set_property`` and ``get_property`` take and report.

irexec runs every model the same way whatever the hints say, so most properties are accepted,
kept and reported back as given (a script that sets ``PERFORMANCE_HINT`` and reads it sees its
value). Two change what irexec does: ``INFERENCE_PRECISION_HINT`` ``f64`` is precise mode
(docs/numerics.md; any other precision computes as irexec always does, each type at its own
precision), and ``PERF_COUNT`` makes infer requests time each layer (``get_profiling_info``).
The names users import (``irexec.properties.hint.performance_mode`` ...) are in
``irexec/properties/``; this module holds the table and the enums.
"""

from __future__ import annotations

import enum
import os

from irexec.ir import element_type as et_table
from irexec.version import __version__


class _Named(enum.Enum):
    """An OpenVINO property enum: printed and parsed by its name, and equal to it (OpenVINO's
    compiled models report some hints as the enum, some as its name: ``"THROUGHPUT"``)."""

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return self.name == other.strip().upper()
        return enum.Enum.__eq__(self, other)

    def __hash__(self) -> int:
        return hash(self.name)

    @classmethod
    def parse(cls, value):
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return cls[value.strip().upper()]
            except KeyError:
                raise ValueError(f"{value!r} is not a {cls.__name__} (one of "
                                 f"{', '.join(m.name for m in cls)})") from None
        return cls(int(value))


class PerformanceMode(_Named):
    LATENCY = 1
    THROUGHPUT = 2
    CUMULATIVE_THROUGHPUT = 3


class ExecutionMode(_Named):
    PERFORMANCE = 1
    ACCURACY = 2


class Priority(_Named):
    LOW = 0
    MEDIUM = 1
    HIGH = 2
    DEFAULT = 1  # noqa: PIE796  (OpenVINO's alias of MEDIUM)


class SchedulingCoreType(_Named):
    ANY_CORE = 0
    PCORE_ONLY = 1
    ECORE_ONLY = 2


class ModelDistributionPolicy(_Named):
    TENSOR_PARALLEL = 0
    PIPELINE_PARALLEL = 1


class CacheMode(_Named):
    OPTIMIZE_SIZE = 0
    OPTIMIZE_SPEED = 1


class WorkloadType(_Named):
    DEFAULT = 0
    EFFICIENT = 1


class LogLevel(_Named):
    NO = -1
    ERR = 0
    WARNING = 1
    INFO = 2
    DEBUG = 3
    TRACE = 4


class StreamsNum:
    """OpenVINO's ``streams.Num``: ``AUTO`` (-1), ``NUMA`` (-2) or a count."""

    AUTO: StreamsNum
    NUMA: StreamsNum

    def __init__(self, count: int):
        self.count = int(count)

    def to_integer(self) -> int:
        return self.count

    def __int__(self) -> int:
        return self.count

    def __eq__(self, other) -> bool:
        return self.count == int(other) if isinstance(other, (int, StreamsNum)) else \
            NotImplemented

    def __hash__(self) -> int:
        return hash(self.count)

    def __repr__(self) -> str:
        return {-1: "AUTO", -2: "NUMA"}.get(self.count, str(self.count))


StreamsNum.AUTO, StreamsNum.NUMA = StreamsNum(-1), StreamsNum(-2)


def _bool(value) -> bool:
    if isinstance(value, str):
        text = value.strip().upper()
        if text in ("YES", "TRUE", "1"):
            return True
        if text in ("NO", "FALSE", "0"):
            return False
        raise ValueError(f"{value!r} is not YES or NO")
    return bool(value)


def _type(value):
    if isinstance(value, str):
        try:
            return et_table.from_precision(value) if value.isupper() else \
                et_table.lookup(value)
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not an element type") from None
    try:
        return et_table.lookup(value)
    except TypeError as e:
        raise ValueError(str(e)) from None


def _streams(value) -> int:
    if isinstance(value, str) and value.strip().upper() in ("AUTO", "NUMA"):
        return -1 if value.strip().upper() == "AUTO" else -2
    return int(value)


def _devices(value) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


# name -> (how a value given is read, default or None). Properties not listed are kept as given.
SETTABLE = {
    "INFERENCE_PRECISION_HINT": (_type, et_table.ElementType.f32),
    "PERFORMANCE_HINT": (PerformanceMode.parse, PerformanceMode.LATENCY),
    "EXECUTION_MODE_HINT": (ExecutionMode.parse, ExecutionMode.PERFORMANCE),
    "PERFORMANCE_HINT_NUM_REQUESTS": (int, 0),
    "NUM_STREAMS": (_streams, 1),
    "INFERENCE_NUM_THREADS": (int, 0),
    "PERF_COUNT": (_bool, False),
    "ENABLE_CPU_PINNING": (_bool, False),
    "ENABLE_HYPER_THREADING": (_bool, False),
    "ENABLE_CPU_RESERVATION": (_bool, False),
    "ENABLE_MMAP": (_bool, True),
    "SCHEDULING_CORE_TYPE": (SchedulingCoreType.parse, SchedulingCoreType.ANY_CORE),
    "MODEL_PRIORITY": (Priority.parse, Priority.MEDIUM),
    "MODEL_DISTRIBUTION_POLICY": (lambda v: v, None),
    "DYNAMIC_QUANTIZATION_GROUP_SIZE": (int, 0),
    "KV_CACHE_PRECISION": (_type, et_table.ElementType.f32),
    "KEY_CACHE_PRECISION": (_type, et_table.ElementType.f32),
    "VALUE_CACHE_PRECISION": (_type, et_table.ElementType.f32),
    "CACHE_DIR": (str, ""),
    "CACHE_MODE": (CacheMode.parse, CacheMode.OPTIMIZE_SPEED),
    "LOG_LEVEL": (LogLevel.parse, LogLevel.NO),
    "COMPILATION_NUM_THREADS": (int, 0),
    "ALLOW_AUTO_BATCHING": (_bool, False),
    "WORKLOAD_TYPE": (WorkloadType.parse, WorkloadType.DEFAULT),
    "DEVICE_ID": (str, ""),
    "MULTI_DEVICE_PRIORITIES": (_devices, None),
}
# Reported, never set.
READ_ONLY = ("SUPPORTED_PROPERTIES", "NETWORK_NAME", "OPTIMAL_NUMBER_OF_INFER_REQUESTS",
             "EXECUTION_DEVICES", "AVAILABLE_DEVICES", "FULL_DEVICE_NAME",
             "OPTIMIZATION_CAPABILITIES", "RANGE_FOR_ASYNC_INFER_REQUESTS",
             "RANGE_FOR_STREAMS", "DEVICE_ARCHITECTURE", "DEVICE_TYPE", "LOADED_FROM_CACHE")
FULL_DEVICE_NAME = "irexec (numpy on the CPU)"


def _name(key) -> str:
    """A property's name: OpenVINO passes ``Property`` objects (str) or plain strings."""
    return str(key)


def read_values(properties) -> dict:
    """A config or ``set_property`` argument (a dict, or ``(name, value)`` pairs as
    ``irexec.properties.hint.performance_mode(...)`` makes them) as {name: value read}."""
    if isinstance(properties, tuple) and len(properties) == 2 and isinstance(properties[0], str):
        properties = [properties]
    items = properties.items() if hasattr(properties, "items") else properties
    out = {}
    for key, value in items:
        name = _name(key)
        if name in READ_ONLY:
            raise RuntimeError(f"property {name} is read-only")
        reader = SETTABLE.get(name, (lambda v: v, None))[0]
        try:
            out[name] = reader(value)
        except (TypeError, ValueError) as e:
            raise RuntimeError(f"property {name}: {value!r} is not a value it takes ({e})") \
                from None
    return out


def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Properties:
    """The properties set on a Core (per device) or on one compiled model."""

    def __init__(self, values: dict | None = None):
        self.values: dict = dict(values or {})

    def set(self, properties) -> None:
        self.values.update(read_values(properties))

    def value(self, name: str):
        if name in self.values:
            return self.values[name]
        return SETTABLE[name][1] if name in SETTABLE else None

    def supported(self) -> dict[str, str]:
        table = {name: "RW" for name in SETTABLE}
        table.update({name: "RO" for name in READ_ONLY})
        return table

    def get(self, name):
        name = _name(name)
        reported = self.reported(name)
        if reported is not None:
            return reported
        if name in self.values or name in SETTABLE:
            return self.value(name)
        raise RuntimeError(f"property {name} is not one irexec has (irexec.properties lists "
                           f"them; docs/api.md)")

    def reported(self, name: str):
        if name == "SUPPORTED_PROPERTIES":
            return self.supported()
        if name in ("AVAILABLE_DEVICES", "EXECUTION_DEVICES"):
            return ["CPU"]
        if name == "FULL_DEVICE_NAME":
            return FULL_DEVICE_NAME
        if name == "OPTIMIZATION_CAPABILITIES":
            return ["FP32", "FP16", "BF16", "INT8", "BIN", "EXPORT_IMPORT"]
        if name == "RANGE_FOR_ASYNC_INFER_REQUESTS":
            return (1, _threads(), 1)
        if name == "RANGE_FOR_STREAMS":
            return (1, _threads())
        if name == "DEVICE_ARCHITECTURE":
            return "numpy"
        if name == "INFERENCE_NUM_THREADS" and not self.values.get(name):
            return _threads()
        return None


class CompiledProperties(Properties):
    """A compiled model's: what it was compiled with, and what irexec reports for it."""

    def __init__(self, model_name: str = "model", precision: str = "f32",
                 values: dict | None = None):
        super().__init__(values)
        self.model_name = model_name
        self.values["INFERENCE_PRECISION_HINT"] = et_table.ElementType.f64 \
            if precision == "f64" else self.value("INFERENCE_PRECISION_HINT")

    @property
    def perf_count(self) -> bool:
        return bool(self.value("PERF_COUNT"))

    def optimal_requests(self) -> int:
        """OpenVINO's OPTIMAL_NUMBER_OF_INFER_REQUESTS: 1 for latency; for throughput, one
        per stream asked for, else one per core irexec may use."""
        if self.value("PERFORMANCE_HINT") == PerformanceMode.LATENCY:
            return 1
        asked = self.value("PERFORMANCE_HINT_NUM_REQUESTS") or 0
        streams = self.value("NUM_STREAMS")
        count = streams if isinstance(streams, int) and streams > 0 and \
            "NUM_STREAMS" in self.values else _threads()
        return max(1, min(count, asked) if asked else count)

    def reported(self, name: str):
        if name == "NETWORK_NAME":
            return self.model_name
        if name == "OPTIMAL_NUMBER_OF_INFER_REQUESTS":
            return self.optimal_requests()
        if name == "LOADED_FROM_CACHE":
            return False
        return super().reported(name)


def versions() -> dict[str, str]:
    """What ``Core.get_versions`` reports for the CPU device."""
    return {"description": "irexec", "build_number": __version__}


def precision_config(values: dict) -> str | None:
    """The irexec precision the properties ask for: "f64" (precise mode) or None."""
    et = values.get("INFERENCE_PRECISION_HINT")
    return "f64" if et is not None and et == et_table.ElementType.f64 else None
