"""Saving a built model with its weights as they are (no f16 compression), so that the file
computes exactly what the model in memory computes.

``compress_to_fp16`` is OpenVINO's save_model argument (its default compresses); this branch's
save_model may not take it yet. (At merge with the API work: ``irexec.save_model(model, path,
compress_to_fp16=False)`` directly.)"""

from __future__ import annotations

import inspect

import irexec


def save_exact(model, path) -> None:
    if "compress_to_fp16" in inspect.signature(irexec.save_model).parameters:
        irexec.save_model(model, path, compress_to_fp16=False)
    else:
        irexec.save_model(model, path)
