"""The library's front door: check_model, validate_file, read_model, compile_model, save_model,
and OpenVINO's Core."""

from __future__ import annotations

import os
import re

from irexec import gc_pause
from irexec.diagnostics.diagnostic import Diagnostic, Location
from irexec.errors import IRError
from irexec.infer import infer_model
from irexec.io.weights import held_open
from irexec.ir.model import Model
from irexec.availability import cannot_run_message
from irexec.runtime.compiled_model import CompiledModel
from irexec.runtime.results import DEVICES, check_device


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


def _file_order(d: Diagnostic):
    return (d.location.line or 0, d.location.column or 0)


def read_model(model, weights=None) -> Model:
    """Read an IR ``.xml`` (weights from ``weights`` or the ``.bin`` beside it) or an ONNX model
    (a ``.onnx`` file or an ``onnx.ModelProto``; needs the ``onnx`` extra), check it and infer
    every tensor's type and shape. Raises :class:`irexec.IRError` listing every error;
    warnings are kept in ``model.diagnostics``."""
    model, diags = check_model(model, weights)
    errors = [d for d in diags if d.is_error]
    if errors:
        raise IRError(errors)
    model.diagnostics = diags
    return model


def compile_model(model, device: str = "CPU", config: dict | None = None) -> CompiledModel:
    """Plan a model (or read one from a path) for running. ``device``: "CPU" or "AUTO" (irexec
    runs with numpy; RuntimeError naming the devices for any other, as OpenVINO's).
    ``config={"precision": "f64"}`` selects precise mode: every float layer computes in float64
    and rounds once to its output type (docs/numerics.md); OpenVINO's own properties
    (``INFERENCE_PRECISION_HINT`` ...) are accepted and ignored. IRError (IR103) naming every op
    type of the model irexec cannot run yet, in one line, if there is any."""
    check_device(device)
    config = _irexec_config(config)
    if isinstance(model, (str, os.PathLike)):
        model = read_model(model)
    check_runnable(model)
    return CompiledModel(model, config)


_OPENVINO_PROPERTY = re.compile(r"[A-Z][A-Z0-9_]*")  # INFERENCE_PRECISION_HINT, NUM_STREAMS ...


def _irexec_config(config):
    """``config`` without OpenVINO's properties (upper-case names): code written for OpenVINO
    passes them, and irexec, computing every type at its own precision, has no use for them."""
    if config is None:
        return None
    return {k: v for k, v in config.items() if not _OPENVINO_PROPERTY.fullmatch(str(k))} or None


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


class Core:
    """OpenVINO's ``Core``: where models are read and compiled."""

    @property
    def available_devices(self) -> list[str]:
        return list(DEVICES)

    def get_available_devices(self) -> list[str]:
        return self.available_devices

    def read_model(self, model, weights=None):
        return read_model(model, weights)

    def compile_model(self, model, device_name: str | None = None, config: dict | None = None):
        """As :func:`compile_model`; the device defaults to "AUTO", as OpenVINO's."""
        return compile_model(model, device_name or "AUTO", config)


def save_model(model: Model, path, weights=None) -> None:
    """Write a model as IR v11: ``path`` (.xml) and ``weights`` (default: the .bin beside it)."""
    from irexec.io.ir_writer import write_ir

    write_ir(model, path, weights)
