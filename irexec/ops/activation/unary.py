"""The one-input activations with no parameters, as one table: Relu, Sigmoid, HSwish, HSigmoid,
Mish, SoftPlus, SoftSign and Gelu-2. Each row is a full spec; the function writes its result into
an output array (which may be the input itself: see irexec/kernels/numeric.py)."""

from __future__ import annotations

import numpy as np

from irexec.kernels import half, numeric
from irexec.kernels.special import gelu_erf
from irexec.ops.spec import register
from irexec.ops.spec import NUMERIC, REAL, Input, Op, OpSpec, Output, TypeVar


_RELU_CHUNK = 1 << 17  # elements a step: each chunk's three passes stay in the L2 cache

# numpy's clip ufunc (np.clip is a Python wrapper around it): with scalar bounds its loop is
# vectorised, where np.maximum and np.fmax with a scalar 0 run an element at a time (a Relu's
# [1,16,112,112] in f32, measured: np.fmax(x, 0) 68 us, clip on the bits 21 us)
CLIP = getattr(getattr(np, "_core", None), "umath", None)
CLIP = getattr(CLIP, "clip", None) or np.clip

# f32 and f64 as integers of their width: the bits of +0.0 and of every positive value (up to
# +inf) are the non-negative integers, those of -0.0, negative values and negative NaNs the
# negative ones, so Relu is a clip of the bits at 0 (giving +0.0's bits), save for a positive
# NaN, whose bits lie above +inf's
_AS_INTS = {np.dtype(np.float32): (np.int32, 0x7F800000),
         np.dtype(np.float64): (np.int64, 0x7FF0000000000000)}


def relu(x, o):
    """max(0, x); NaN gives 0 and -0.0 gives 0.0, as OpenVINO's reference (x > 0 ? x : 0)."""
    if x.dtype.kind != "f":
        np.maximum(x, 0, out=o)
        return
    bits = _AS_INTS.get(x.dtype)
    if bits is not None and o.dtype == x.dtype:
        _relu_bits(x, o, *bits)
        return
    if x.flags.c_contiguous and o.flags.c_contiguous and x.shape == o.shape:
        src, dst = x.reshape(-1), o.reshape(-1)
        for i in range(0, src.size, _RELU_CHUNK):
            _relu_float(src[i:i + _RELU_CHUNK], dst[i:i + _RELU_CHUNK])
    else:
        _relu_float(x, o)


def _relu_bits(x, o, itype, inf):
    """Relu of f32 or f64 on the bits (see _AS_INTS): one clip of the integers at 0 and one
    reduction that finds a positive NaN (then every NaN is set to 0)."""
    ints = o.view(itype)
    top = itype(np.iinfo(itype).max)
    CLIP(x.view(itype), itype(0), top, out=ints)
    if ints.size and ints.max() > inf:
        np.copyto(o, 0, where=np.isnan(o))


def _relu_float(x, o):
    np.fmax(x, 0, out=o)  # fmax(NaN, 0) = 0 ...
    o += 0  # -0.0 + 0 = +0.0
    if o.size and np.isnan(o.max()):  # ... but a signalling NaN that numpy's scalar loop meets
        np.copyto(o, 0, where=np.isnan(o))  # (a strided array, an array's last elements) stays


def sigmoid(x, o):
    """1 / (1 + exp(-x)) (numpy's exp: a few ulps, which the gates of recurrent layers carry
    from step to step; Swish takes the faster exp2, kernels/special.py's exp_scaled)."""
    np.negative(x, out=o)
    np.exp(o, out=o)
    o += 1
    np.reciprocal(o, out=o)


def hswish(x, o):
    """x * min(max(x + 3, 0), 6) / 6."""
    t = np.add(x, 3)
    np.clip(t, 0, 6, out=t)
    t *= x
    np.divide(t, 6, out=o)


def hsigmoid(x, o):
    """min(max(x + 3, 0), 6) / 6."""
    np.add(x, 3, out=o)
    np.clip(o, 0, 6, out=o)
    o /= 6


def softplus(x, o):
    """ln(1 + exp(x)), without overflow for large x."""
    np.logaddexp(x, 0, out=o)


def mish(x, o):
    """x * tanh(softplus(x))."""
    t = np.logaddexp(x, 0)
    np.tanh(t, out=t)
    np.multiply(x, t, out=o)


def softsign(x, o):
    """x / (1 + |x|)."""
    t = np.abs(x)
    t += 1
    np.divide(x, t, out=o)


# (type, since, until, element types, function, what it computes)
TABLE = (
    ("Relu", 1, 16, NUMERIC, relu, "max(0, x) element-wise."),
    ("Sigmoid", 1, 16, REAL, sigmoid, "the logistic function 1 / (1 + exp(-x)) element-wise."),
    ("HSwish", 4, 16, REAL, hswish, "x * min(max(x + 3, 0), 6) / 6 element-wise."),
    ("HSigmoid", 5, 16, REAL, hsigmoid, "min(max(x + 3, 0), 6) / 6 element-wise."),
    ("Mish", 4, 16, REAL, mish, "x * tanh(ln(1 + exp(x))) element-wise."),
    ("SoftPlus", 4, 16, REAL, softplus, "ln(1 + exp(x)) element-wise."),
    ("SoftSign", 9, 16, REAL, softsign, "x / (1 + |x|) element-wise."),
    ("Gelu", 2, 6, REAL, gelu_erf, "the Gaussian error linear unit 0.5 * x * (1 + erf(x / "
                                   "sqrt(2))) element-wise (Gelu-7 adds the tanh form)."),
)

# How each result is computed, for the tolerances of irexec/numerics.py: Relu selects, HSwish,
# HSigmoid and SoftSign round a few IEEE operations, the rest are built of exp, log or erf.
NUMERICS = {"Relu": "exact", "HSwish": "rounded", "HSigmoid": "rounded", "SoftSign": "rounded",
            "Sigmoid": "transcendental", "Mish": "transcendental",
            "SoftPlus": "transcendental", "Gelu": "transcendental"}


_BITS = {relu: half.relu}  # f16/bf16 computed on their bits (else by table: kernels/half.py)


def _make(type_name, since, until, types, fn, doc):
    T = TypeVar("T", types)
    kernels = numeric.unary(fn, ints=fn, bits=_BITS.get(fn))
    spec = OpSpec(
        type=type_name, since=since, until=until, numerics=NUMERICS[type_name],
        inputs=(Input("data", T, doc=f"a tensor of {types.describe()}"),),
        outputs=(Output("output", "the function of each element; same type and shape", type=T),),
        doc=f"Computes {doc}",
        in_place=kernels.in_place,
    )
    return register(type(type_name, (Op,), {"spec": spec,
                                            "kernel": staticmethod(kernels.kernel),
                                            "__module__": __name__, "__doc__": spec.doc}))


OPS = {row[0]: _make(*row) for row in TABLE}
