"""The library's front door: read_model, compile_model, save_model."""

from __future__ import annotations

import os

from irexec.infer import infer_model
from irexec.ir.model import Model
from irexec.runtime.compiled_model import CompiledModel


def read_model(model, weights=None) -> Model:
    """Read an IR ``.xml`` (weights from ``weights`` or the ``.bin`` beside it), check it and
    infer every tensor's type and shape. Raises :class:`irexec.IRError` listing every problem."""
    from irexec.io.ir_reader import read_ir

    model = read_ir(model, weights)
    diags = infer_model(model)
    diags.raise_if_errors()
    model.diagnostics.extend(diags.warnings)
    return model


def compile_model(model, device: str = "CPU") -> CompiledModel:
    """Plan a model (or read one from a path) for running. ``device`` is accepted for OpenVINO
    compatibility; irexec always runs with numpy."""
    if isinstance(model, (str, os.PathLike)):
        model = read_model(model)
    return CompiledModel(model)


def save_model(model: Model, path, weights=None) -> None:
    """Write a model as IR v11: ``path`` (.xml) and ``weights`` (default: the .bin beside it)."""
    from irexec.io.ir_writer import write_ir

    write_ir(model, path, weights)
