"""irexec's numeric contract in code: the ONE tolerance table (docs/numerics.md explains it).

Every op belongs to a *family* by how its result is computed:

* ``exact``           -- no rounding that two correct implementations could do differently: data
  movement, selection (Relu, Clamp, Maximum), conversions, and every integer or boolean result.
  Must agree bit for bit (NaN payloads and the sign of zero aside, for floats).
* ``rounded``         -- a few correctly rounded IEEE operations (Add, Multiply, Divide, Sqrt,
  PRelu, HSwish ...): a few units in the last place apart.
* ``transcendental``  -- exp, log, tanh, erf and what is built of them (Sigmoid, Gelu, Softmax's
  exponentials ...): libraries approximate these differently.
* ``accumulating``    -- results that sum many terms (Softmax, reductions, MatMul, Convolution):
  besides rtol/atol, an error proportional to the sum of the magnitudes of the terms is allowed
  (``accum * eps * sum |terms|``), since the order of a sum changes its rounding.

A float result of element type T is compared against a reference (OpenVINO, or irexec's precise
mode) with ``|ours - ref| <= atol + rtol * |ref| + accum * eps * magnitude`` where NaN matches NaN
and infinities must be equal. rtol and atol follow from the family and T: the family's counts of
machine epsilons of the type the value is computed in (f32 for f16, bf16 and the f8/f4 types, and
for f64 too when the reference is OpenVINO, whose CPU plugin computes f64 as f32), plus one unit
in the last place of T itself when T is narrower than that (the final rounding may fall either
way), plus T's smallest subnormal.

``irexec compare``, the conformance tests and docs/numerics.md all read :func:`tolerance`.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType

EXACT, ROUNDED, TRANSCENDENTAL, ACCUMULATING = "exact", "rounded", "transcendental", "accumulating"

# family -> (rtol, atol, accum), each in machine epsilons of the compute type.
FAMILIES: dict[str, tuple[float, float, float]] = {
    EXACT: (0, 0, 0),
    ROUNDED: (2, 8, 0),
    TRANSCENDENTAL: (16, 32, 0),
    ACCUMULATING: (16, 32, 4),
}

FAMILY_DOCS = {
    EXACT: "bit-exact: data movement, selection, conversion, every integer or boolean result",
    ROUNDED: "a few correctly rounded IEEE operations",
    TRANSCENDENTAL: "exp, log, tanh, erf and functions built from them",
    ACCUMULATING: "sums over many terms: the error may grow with the sum of their magnitudes",
}

def family(spec) -> str:
    """The family of an op, from its spec (``irexec.ops.spec.OpSpec``): the one it declares;
    else exact when it only moves data, else accumulating (the loosest) until it is placed."""
    if spec.numerics is not None:
        return spec.numerics
    return EXACT if spec.exact else ACCUMULATING


def _finfo(et: ElementType):
    return ml_dtypes.finfo(et.dtype)


def eps(et: ElementType) -> float:
    """Machine epsilon of a float type (the distance from 1 to the next value)."""
    return float(_finfo(et).eps)


def compute_type(et: ElementType, against_openvino: bool = True) -> ElementType:
    """The type a float of ``et`` is computed in: f32, or f64 for f64 except against OpenVINO
    (its CPU plugin computes f64 as f32)."""
    if et.name == "f64" and not against_openvino:
        return et
    return et_table.from_name("f32")


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    accum: float  # in units of eps * sum of magnitudes of the terms
    eps: float  # machine epsilon of the compute type, for ``accum``

    @property
    def exact(self) -> bool:
        return self.rtol == 0 and self.atol == 0 and self.accum == 0

    def bound(self, ref: np.ndarray, magnitude=None) -> np.ndarray:
        """The largest allowed |ours - ref| per element (float64)."""
        ref = np.abs(np.asarray(ref, dtype=np.float64))
        out = self.atol + self.rtol * ref
        if self.accum and magnitude is not None:
            out = out + self.accum * self.eps * np.asarray(magnitude, dtype=np.float64)
        return out

    def outside(self, ours, ref, magnitude=None) -> np.ndarray:
        """A boolean mask of the elements of ``ours`` outside the tolerance of ``ref`` (NaN
        matches NaN; infinities must be equal)."""
        x = np.asarray(ours).astype(np.float64)
        y = np.asarray(ref).astype(np.float64)
        with np.errstate(invalid="ignore"):
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            close = np.abs(x - y) <= self.bound(y, magnitude)
        return ~(same | (close & np.isfinite(x) & np.isfinite(y)))


def tolerance(op_family: str, et: ElementType, against_openvino: bool = True) -> Tolerance:
    """The tolerance of a result of element type ``et`` from an op of ``op_family``. Integer,
    boolean and other non-float types are always exact."""
    if not et.is_real or op_family == EXACT:
        return Tolerance(0.0, 0.0, 0.0, 0.0)
    k_rel, k_abs, k_acc = FAMILIES[op_family]
    c = compute_type(et, against_openvino)
    e = eps(c)
    rtol, atol = k_rel * e, k_abs * e
    if et.bits < c.bits or et.name == "f8e8m0":
        rtol += eps(et)  # the final rounding to et may fall either way
    atol += float(_finfo(et).smallest_subnormal)
    return Tolerance(rtol, atol, float(k_acc), e)


def table(against_openvino: bool = True) -> list[tuple[str, str, Tolerance]]:
    """Every (family, float type, tolerance), for the docs and tests."""
    floats = [et for et in et_table.SUPPORTED if et.is_real]
    return [(f, et.name, tolerance(f, et, against_openvino)) for f in FAMILIES for et in floats]


def ulps(ours, ref, et: ElementType) -> np.ndarray:
    """|ours - ref| in units in the last place of ``et`` at ``ref`` (float64; 0 where equal or
    both NaN, inf where one is NaN or an infinity differs)."""
    x = np.asarray(ours).astype(np.float64)
    y = np.asarray(ref).astype(np.float64)
    info = _finfo(et)
    with np.errstate(all="ignore"):
        exponent = np.floor(np.log2(np.maximum(np.abs(y), float(info.tiny))))
        unit = np.exp2(exponent - int(info.nmant))
        unit = np.maximum(unit, float(info.smallest_subnormal))
        err = np.abs(x - y) / unit
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        err = np.where(same, 0.0, np.where(np.isfinite(err), err, np.inf))
    return err


@dataclass(frozen=True)
class Errors:
    max_abs: float
    max_rel: float
    max_ulps: float


def errors(ours, ref, et: ElementType) -> Errors:
    """The largest absolute, relative and ULP error of ``ours`` against ``ref`` (NaN matching
    NaN counts as no error; a mismatched NaN or infinity as an infinite one)."""
    x = np.asarray(ours).astype(np.float64)
    y = np.asarray(ref).astype(np.float64)
    if x.size == 0:
        return Errors(0.0, 0.0, 0.0)
    with np.errstate(all="ignore"):
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        diff = np.where(same, 0.0, np.abs(x - y))
        diff = np.where(np.isnan(diff), np.inf, diff)
        rel = np.where(same, 0.0, diff / np.abs(y))
        rel = np.where(np.isnan(rel), np.inf, rel)
    return Errors(float(diff.max()), float(rel.max()), float(ulps(x, y, et).max()))


def markdown_table() -> str:
    """The tolerance table as docs/numerics.md shows it (a test keeps the two the same)."""
    floats = [et for et in et_table.SUPPORTED if et.is_real]
    lines = ["| family | " + " | ".join(et.name for et in floats) + " |",
             "| --- |" + " --- |" * len(floats)]
    for f in FAMILIES:
        if f == EXACT:
            lines.append("| exact | " + " | ".join("bit-exact" for _ in floats) + " |")
            continue
        cells = []
        for et in floats:
            t = tolerance(f, et)
            cell = f"rtol {t.rtol:.3g}, atol {t.atol:.3g}"
            if t.accum:
                cell += f", + {t.accum:g} eps x sum"
            cells.append(cell)
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
