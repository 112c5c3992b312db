"""The library's front door: check_model, validate_file, read_model, compile_model, save_model,
and OpenVINO's Core."""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
import weakref

import numpy as np

from irexec import gc_pause
from irexec.diagnostics.diagnostic import Diagnostic, Location
from irexec.errors import IRError
from irexec.infer import infer_model
from irexec.io.weights import held_open
from irexec.ir.model import Model
from irexec.availability import cannot_run_message
from irexec.builder import add_outputs
from irexec.runtime.compiled_model import CompiledModel
from irexec.runtime.properties import (CompiledProperties, Properties, precision_config,
                                       read_values)
from irexec.runtime.results import DEVICES, Tensor, check_device
from irexec.version import __version__


def check_model(model, weights=None, weights_optional: bool = False) \
        -> tuple[Model | None, list[Diagnostic]]:
    """Read, check and infer an IR file; return the model (None when the file is not readable
    IR at all) and every problem found, errors and warnings, in file order. Never raises for a
    problem in the file. ``read_model`` and ``irexec validate`` both stand on this.
    ``weights_optional``: an IR's missing weights file is no error (its constants' values are
    unknown; ``model.weights_missing`` says why), for describing a model's structure."""
    with gc_pause.paused():  # reading and inference build the model: see irexec/gc_pause.py
        return _check_model(model, weights, weights_optional)


def validate_file(path, weights=None) -> list[Diagnostic]:
    """Every problem in one IR or ONNX file (errors and warnings), in file order, as
    ``irexec validate`` reports them. Never raises for a problem in the file: an unreadable or
    malformed file gives one diagnostic."""
    return check_model(path, weights)[1]


def _check_model(model, weights, weights_optional=False):
    from irexec.io.ir_reader import load_ir

    try:
        if _is_onnx(model):
            from irexec.io.onnx_reader import load_onnx

            model, diags = load_onnx(model)
        else:
            model, diags = load_ir(model, weights, weights_optional)
    except IRError as e:
        return None, list(e.diagnostics)
    try:
        with held_open():  # the small Consts inference reads: the .bin opened once
            diags.items.extend(infer_model(model))
    except IRError as e:  # a Const's payload gone from a .bin changed while it was read
        diags.items.extend(e.diagnostics)
    return model, sorted(diags, key=_file_order)


def _is_onnx(model) -> bool:
    """An ``onnx.ModelProto``, a ``.onnx`` path, or a file that starts like one."""
    if not isinstance(model, (str, os.PathLike)):
        return type(model).__name__ == "ModelProto"
    from irexec.io.onnx_reader import is_onnx_file

    return is_onnx_file(model)


Model.reinfer = staticmethod(infer_model)  # Model.reshape infers again (see ir/model.py)
Model.add_outputs = add_outputs  # makes Result layers: the builder's (see irexec/builder.py)


def _file_order(d: Diagnostic):
    return (d.location.line or 0, d.location.column or 0)


def read_model(model, weights=None, config: dict | None = None) -> Model:
    """Read an IR ``.xml`` (weights from ``weights`` or the ``.bin`` beside it) or an ONNX model
    (a ``.onnx`` file or an ``onnx.ModelProto``; needs the ``onnx`` extra), check it and infer
    every tensor's type and shape. As OpenVINO's, the IR may also be given in memory: its XML
    as bytes or text, its weights as bytes, a Tensor or an array of bytes. Raises
    :class:`irexec.IRError` listing every error; warnings are kept in ``model.diagnostics``."""
    if isinstance(model, Model):
        return model
    keep = None
    if _in_memory(model) or (weights is not None and _in_memory(weights)):
        keep, model, weights = _spill(model, weights)
    found, diags = check_model(model, weights)
    errors = [d for d in diags if d.is_error]
    if errors:
        raise IRError(errors)
    found.diagnostics = diags
    if keep is not None:  # the files live as long as the model reads its weights from them
        weakref.finalize(found, shutil.rmtree, keep, True)
    return found


def _in_memory(value) -> bool:
    """IR given as content rather than a path: bytes, a buffer, an array, a Tensor, or XML
    text (a str starting with '<')."""
    if isinstance(value, (bytes, bytearray, memoryview, np.ndarray, Tensor, io.IOBase)):
        return True
    return isinstance(value, str) and value.lstrip().startswith("<")


def _content(value) -> bytes:
    if isinstance(value, Tensor):
        value = value.data
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value).tobytes()
    if isinstance(value, io.IOBase):
        return value.getvalue() if hasattr(value, "getvalue") else value.read()
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)


def _spill(model, weights):
    """In-memory IR written to a private folder, read from there like any file (the reader's
    lazy weights need a file). Returns (folder, xml path, weights path)."""
    folder = tempfile.mkdtemp(prefix="irexec-model-")
    xml = model
    if _in_memory(model):
        xml = os.path.join(folder, "model.xml")
        with open(xml, "wb") as f:
            f.write(_content(model))
    if weights is not None and _in_memory(weights):
        path = os.path.join(folder, "model.bin")
        with open(path, "wb") as f:
            f.write(_content(weights))
        weights = path
    elif weights is None and _in_memory(model):
        weights = os.path.join(folder, "model.bin")
        open(weights, "wb").close()  # a model without weights: an empty .bin
    return folder, xml, weights


def convert_model(input_model, **kwargs) -> Model:
    """OpenVINO's ``convert_model`` for what irexec reads: an IR or ONNX file, or an
    ``onnx.ModelProto`` (frameworks' in-memory models are OpenVINO's converter's work)."""
    if kwargs:
        raise TypeError(f"convert_model: irexec takes no options ({', '.join(kwargs)})")
    if not (isinstance(input_model, (str, os.PathLike)) or
            type(input_model).__name__ == "ModelProto"):
        raise TypeError(f"convert_model: irexec reads IR and ONNX files (or an onnx "
                        f"ModelProto), not {type(input_model).__name__}; convert it with "
                        f"OpenVINO and save_model it")
    return read_model(input_model)


def compile_model(model, device_name: str | None = "AUTO", config: dict | None = None, *,
                  defaults: dict | None = None) -> CompiledModel:
    """Plan a model (or read one from a path) for running. ``device_name``: "CPU" or "AUTO" (irexec
    runs with numpy; RuntimeError naming the devices for any other, as OpenVINO's).
    ``config={"precision": "f64"}`` selects precise mode: every float layer computes in float64
    and rounds once to its output type (docs/numerics.md), as does OpenVINO's property
    ``INFERENCE_PRECISION_HINT`` f64; OpenVINO's other properties (``PERFORMANCE_HINT``,
    ``NUM_STREAMS`` ...; see irexec/runtime/properties.py) are kept and reported by
    ``get_property``; ``PERF_COUNT`` makes requests time each layer. ``defaults``: properties
    set on a Core. IRError (IR103) naming every op type of the model irexec cannot run yet, in
    one line, if there is any."""
    check_device(device_name)
    own, given = _split_config(config)
    values = {**(defaults or {}), **read_values(given)}
    if own is None and precision_config(values):
        own = {"precision": precision_config(values)}
    if isinstance(model, (str, os.PathLike)):
        model = read_model(model)
    check_runnable(model)
    compiled = CompiledModel(model, own)
    compiled.properties = CompiledProperties(model.name, compiled.precision, values)
    return compiled


_OPENVINO_PROPERTY = re.compile(r"[A-Z][A-Z0-9_]*")  # INFERENCE_PRECISION_HINT, NUM_STREAMS ...


def _split_config(config) -> tuple[dict | None, dict]:
    """irexec's own config keys (``precision``) apart from OpenVINO's properties (upper-case
    names, or the pairs ``irexec.properties`` functions make)."""
    if config is None:
        return None, {}
    if isinstance(config, tuple) or (isinstance(config, list)):
        config = dict([config] if isinstance(config, tuple) else config)
    own = {k: v for k, v in config.items() if not _OPENVINO_PROPERTY.fullmatch(str(k))}
    theirs = {str(k): v for k, v in config.items() if _OPENVINO_PROPERTY.fullmatch(str(k))}
    return own or None, theirs


def check_runnable(model: Model) -> None:
    """IRError, one diagnostic for the whole model, if any layer's op (bodies' included)
    cannot run."""
    missing = [n for n in _layers(model) if n.op is None]
    if missing:
        raise IRError.make("IR103", cannot_run_message(missing), Location(model.path))


def _layers(model: Model):
    """Every layer of the model and, depth first, of its layers' bodies."""
    for node in model.nodes:
        yield node
        for body in node.bodies.values():
            yield from _layers(body.model)


class Version:
    """What ``Core.get_versions`` reports for a device (OpenVINO's ``Version``)."""

    def __init__(self, description: str, build_number: str):
        self.description, self.build_number = description, build_number
        numbers = [int(p) if p.isdigit() else 0 for p in build_number.split("+")[0].split(".")]
        self.major, self.minor, self.patch = (numbers + [0, 0, 0])[:3]

    def __str__(self) -> str:
        return self.build_number

    def __repr__(self) -> str:
        return f"<Version: {self.build_number} {self.description}>"


def get_version() -> str:
    """irexec's version (OpenVINO's ``get_version``)."""
    return __version__


class Core:
    """OpenVINO's ``Core``: where models are read and compiled, and properties set for the
    device. irexec has one device, "CPU" (numpy); "AUTO" picks it."""

    def __init__(self, xml_config_file: str | None = None):
        self._properties = Properties()

    @property
    def available_devices(self) -> list[str]:
        return list(DEVICES)

    def get_available_devices(self) -> list[str]:
        return self.available_devices

    def get_versions(self, device_name: str) -> dict[str, Version]:
        """{device: Version} for "CPU" (or "AUTO", "AUTO:CPU", answered as CPU)."""
        check_device(device_name)
        return {"CPU": Version("irexec", __version__)}

    def read_model(self, model, weights=None, config: dict | None = None) -> Model:
        """A path (IR ``.xml`` or ``.onnx``), or the IR's XML as text or bytes with its
        weights as bytes, a Tensor or a path (OpenVINO's in-memory form)."""
        return read_model(model, weights)

    def compile_model(self, model, device_name: str | None = None, config: dict | None = None,
                      *, weights=None) -> CompiledModel:
        """As :func:`compile_model`; the device defaults to "AUTO", as OpenVINO's. The
        properties set on this Core are the defaults; ``config`` overrides them."""
        if weights is not None and not isinstance(model, Model):
            model = read_model(model, weights)
        return compile_model(model, device_name or "AUTO", config,
                             defaults=self._properties.values)

    def set_property(self, device_name_or_properties, properties=None) -> None:
        """``set_property({name: value})`` or ``set_property("CPU", {...})``: defaults for the
        models this Core compiles (``irexec.properties`` names the properties)."""
        if properties is None:
            properties = device_name_or_properties
        else:
            check_device(device_name_or_properties)
        self._properties.set(properties)

    def get_property(self, device_name: str, name=None):
        """``get_property("CPU", name)`` (or ``get_property(name)``): a property set on this
        Core, its default, or what irexec reports (``AVAILABLE_DEVICES``,
        ``FULL_DEVICE_NAME``, ``SUPPORTED_PROPERTIES`` ...)."""
        if name is None:
            device_name, name = None, device_name
        else:
            check_device(device_name)
        return self._properties.get(name)

    def query_model(self, model: Model, device_name: str = "CPU",
                    config: dict | None = None) -> dict[str, str]:
        """{layer name: "CPU"} for every layer irexec can run."""
        check_device(device_name)
        return {n.name: "CPU" for n in _layers(model) if n.op is not None}


def save_model(model: Model, output_model, compress_to_fp16: bool = False, weights=None) -> None:
    """Write a model as IR v11: ``output_model`` (.xml) and ``weights`` (default: the .bin
    beside it), every Constant as it is. ``compress_to_fp16=True``: f32 and f64 Constants are
    stored as f16 and converted back by a Convert marked ``decompression``, as OpenVINO writes
    them (``irexec.ops.type.convert.compress_to_f16``); the model itself is unchanged.
    OpenVINO compresses by default; irexec only when asked (docs/compatibility.md)."""
    from irexec.io.ir_writer import write_ir

    if compress_to_fp16:
        from irexec.ops.type.convert import compress_to_f16  # the op's module, when needed

        model = model.clone()
        compress_to_f16(model)
    write_ir(model, output_model, weights)


def serialize(model: Model, xml_path, bin_path=None) -> None:
    """OpenVINO's older name: the model as it is (no f16 compression)."""
    save_model(model, xml_path, compress_to_fp16=False, weights=bin_path)
