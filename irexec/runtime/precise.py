"""Precise mode (``compile_model(model, config={"precision": "f64"})``, ``irexec run --precise``):
every floating-point op computes in float64 and its outputs are rounded once to their declared
element types, so each layer's result is the correctly rounded value of its exact function of its
(rounded) inputs, up to float64's own error. It is the reference the default mode and OpenVINO
are measured against (docs/numerics.md).

Nothing here is per op: the plan wraps the kernel of each step that computes with floats (an op
not in the exact family, with a float input): the float inputs are widened to float64, the kernel
runs on them, and each float output is rounded to its port's element type. Kernels therefore take
float64 inputs as they take any float type. Exact ops (data movement, conversions, selection)
run unwrapped: widening cannot change their result. So do the ops whose float result is one
correctly rounded IEEE operation (Add, Subtract, Multiply, Divide, Sqrt: ``one_rounding`` in
their specs): for f32 and narrower types, rounding the float64 result once more gives exactly the
f32 result, and the widening would only cost time (14x on MobileNet-V2's 63 Adds).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irexec import numerics
from irexec.ir import element_type as et_table
from irexec.kernels.numeric import round_once

PRECISIONS = ("f32", "f64")  # config "precision": the default, and precise mode
_F64 = np.dtype(np.float64)
_FLOATS = frozenset(et.dtype for et in et_table.SUPPORTED if et.is_real)


def precision_of(config) -> str:
    """The precision a compile config asks for; ValueError naming what is wrong."""
    if config is None:
        return "f32"
    unknown = sorted(set(config) - {"precision", "decompression", "fusion"})
    if unknown:
        raise ValueError(f"unknown compile_model config key {unknown[0]!r} (known: precision, "
                         f"decompression, fusion)")
    value = str(config.get("precision", "f32")).lower()
    if value not in PRECISIONS:
        raise ValueError(f"config precision {config['precision']!r} is not one of "
                         f"{', '.join(PRECISIONS)} (f64: precise mode)")
    return value


def needs_widening(node) -> bool:
    """Whether a layer computes with floats: not an exact op, and some input is a float."""
    op = node.op
    if getattr(node, "bodies", None):
        return False  # Loop, TensorIterator, If: their bodies' plans widen their own layers
    if numerics.family(op.spec) == numerics.EXACT:
        return False
    if op.spec.one_rounding:
        return False  # f32 already gives the once-rounded result (ops/spec.py, one_rounding)
    if not op.spec.folds:
        return False  # state or chance (RandomUniform, Multinomial): numbers of its own making
    for port in node.inputs:
        et = port.source.element_type if port.source is not None else None
        if et is None or et.is_dynamic or et.is_real:
            return True
    return False


def _widen(a):
    return a.astype(_F64) if a.dtype in _FLOATS and a.dtype != _F64 else a


def wrap(node, kernel: Callable) -> Callable:
    """``kernel`` computing in float64 and rounding each float output to its port's type."""
    declared = [p.element_type for p in node.outputs]
    single = len(declared) == 1

    def out_dtype(i: int, args) -> np.dtype | None:
        et = declared[i] if i < len(declared) else None
        if et is not None and not et.is_dynamic:
            return et.dtype if et.is_real else None
        # Dynamic element type: the type the first float input came with.
        return next((a.dtype for a in args if a.dtype in _FLOATS), None)

    def rounded(r, i, args):
        dtype = out_dtype(i, args)
        if dtype is None or r.dtype == dtype or r.dtype not in _FLOATS:
            return r
        return round_once(r, dtype)

    def precise(*args):
        result = kernel(*[_widen(a) for a in args])
        if single:
            return rounded(result, 0, args)
        return tuple(rounded(r, i, args) for i, r in enumerate(result))

    precise.__wrapped__ = kernel
    return precise
