"""Element-wise functions of the 16-bit floats (f16, bf16), fast and with the results of
computing them in f32: by table lookup, and selections and comparisons on the bits.

A 16-bit float has 65,536 values. A function of one element -- an activation, Exp, Tanh, with
its attributes and one-element parameters fixed -- therefore is a table of 65,536 results, which
irexec computes once, by the very code that computes the function directly (in f32, rounded once:
docs/numerics.md), and then applies to a tensor of any size as one gather (``np.take`` over the
uint16 view, in chunks). The results are the direct computation's, bit for bit: each entry *is*
that computation, of that element's bits. (Which NaN a NaN result is, its sign and payload, is
not promised even directly: numpy's f32 tanh gives one input different NaNs at different places
in an array. A table gives each input one NaN; docs/numerics.md.)

Why: numpy's f16 <-> f32 casts are scalar loops (about 2.5 f32 Relus each way on 64 MiB), so
"widen, compute, round" costs 5-13x the f32 time of a cheap function; the gather costs about one
f32 Relu, whatever the function.

:func:`mapped` is the entry point; tables live in a small cache shared by all ops (least
recently used first out), keyed by what the caller says determines the function.

Where the result is one of the inputs, integer operations on the bits are faster still:
:func:`relu`, :func:`clamp`, :func:`select` (Maximum, Minimum) and :func:`compare` (Equal,
Less ...), a chunk at a time so that the temporaries stay in the cache; a chunk holding a NaN
takes the table or an f32 comparison. :func:`direct` turns all of this off (the tests compare
the two ways). :func:`to_f32` widens f16 by lookup, faster than numpy's cast.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import ml_dtypes
import numpy as np

from irexec import forksafe
from irexec.kernels import buffers

F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
HALVES = (F16, BF16)

BUILD_MIN = 1 << 16  # elements: from here a table costs at most the direct computation once
USE_MIN = 1 << 10  # elements: from here an already built table beats computing directly
CHUNK = 1 << 17  # elements per gather (np.take makes an intp copy of each chunk's indices)
LIMIT = 64  # tables kept (128 KiB each)

_tables: OrderedDict[tuple, np.ndarray] = OrderedDict()
_lock = threading.Lock()
_enabled = True


def _after_fork() -> None:
    global _lock
    _lock = threading.Lock()


forksafe.at_fork(_after_fork)
_ALL = np.arange(1 << 16, dtype=np.uint16)


@contextlib.contextmanager
def direct():
    """Within: every function is computed directly, no table built or used, no selection on the
    bits (for tests)."""
    global _enabled
    before, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = before


def active() -> bool:
    """Whether tables and the other shortcuts here are in use (not within :func:`direct`)."""
    return _enabled


def table(dtype: np.dtype, key: Hashable, compute: Callable[[np.ndarray], np.ndarray]
          ) -> np.ndarray:
    """The uint16 bits of ``compute`` of every value of the 16-bit float ``dtype`` (indexed by
    the value's bits), built on first use and kept under ``key``."""
    k = (dtype, key)
    with _lock:
        t = _tables.get(k)
        if t is not None:
            _tables.move_to_end(k)
            return t
    result = np.asarray(compute(_ALL.copy().view(dtype)))  # a copy: compute may write in it
    if result.dtype != dtype or result.shape != _ALL.shape:
        raise TypeError(f"a tabled function gave {result.dtype}{list(result.shape)}, not "
                        f"{dtype}[65536]")
    t = np.ascontiguousarray(result).view(np.uint16)
    t.flags.writeable = False
    with _lock:
        _tables[k] = t
        while len(_tables) > LIMIT:
            _tables.popitem(last=False)
    return t


def _cached(dtype: np.dtype, key: Hashable) -> bool:
    with _lock:
        return (dtype, key) in _tables


def lookup(t: np.ndarray, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``t`` (a table of 65,536 uint16) applied to each element of ``x`` (a 16-bit float
    array), into ``out`` (x's shape and type; x itself is allowed) or a new array."""
    if out is None:
        out = buffers.empty(x.shape, x.dtype)
    src = np.ascontiguousarray(x).reshape(-1).view(np.uint16)
    dst = out.reshape(-1).view(np.uint16)  # out is C-contiguous: a view, not a copy
    n = src.size
    for i in range(0, n, CHUNK):  # mode="wrap": no bounds pass and no copy of out
        np.take(t, src[i:i + CHUNK], out=dst[i:i + CHUNK], mode="wrap")
    return out


def mapped(x: np.ndarray, key: Hashable, compute: Callable[[np.ndarray], np.ndarray],
           out: np.ndarray | None = None) -> np.ndarray:
    """``compute(x)`` for an element-wise ``compute`` that ``key`` determines: by table for a
    large enough f16/bf16 ``x``, else directly. ``out`` (x's shape and type, possibly x itself)
    receives a table's result; a direct result is returned as ``compute`` gives it."""
    if (_enabled and x.dtype in HALVES
            and (x.size >= BUILD_MIN or x.size >= USE_MIN and _cached(x.dtype, key))):
        try:
            hash(key)
        except TypeError:  # an unhashable attribute: no table
            return compute(x)
        if out is not None and not (out.flags.c_contiguous and out.shape == x.shape
                                    and out.dtype == x.dtype):
            out = None
        return lookup(table(x.dtype, key, compute), x, out)
    return compute(x)


def wants_table(x: np.ndarray) -> bool:
    """Whether :func:`mapped` may use a table for ``x`` (callers skip preparing a key when
    not)."""
    return _enabled and x.dtype in HALVES and x.size >= USE_MIN


def key(*parts) -> tuple:
    """A table key of attribute values and parameter arrays that tells apart everything that
    can change a result: -0.0 from 0.0 (equal as Python floats), each NaN from itself (a float
    NaN is unequal to itself), an array's type and bits."""
    return tuple(_frozen(p) for p in parts)


def _frozen(v):
    if isinstance(v, float):
        return ("float", v.hex())
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return (a.dtype.str, a.shape, a.tobytes())
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, *(_frozen(p) for p in v))
    if isinstance(v, dict):
        return ("dict", *((k, _frozen(p)) for k, p in sorted(v.items())))
    return v


# --- selections on the bits -------------------------------------------------------------------

_INF_BITS = {F16: 0x7C00, BF16: 0x7F80}  # +inf; a larger int16 is a positive NaN
SELECT_CHUNK = 1 << 17  # elements a step: few Python steps (each costs about a microsecond)
BITS_CHUNK = 1 << 17  # the same for Relu and Clamp, which keep no temporaries
# numpy's minimum and maximum are vectorised between two contiguous arrays, not with a scalar
# (5-8x slower; its shifts, bitwise operations and comparisons are fast either way): their
# constant operands come as whole chunks
_ZEROS = np.zeros(BITS_CHUNK, np.int16)
_ZEROS.flags.writeable = False


def relu(x: np.ndarray, out: np.ndarray) -> None:
    """Relu of a 16-bit float, as its f32 computation gives it (``fmax(x, 0) + 0``): x where
    0 < x <= inf -- as an int16, 0 < bits <= inf's bits -- else +0.0 (negative values, -0.0
    and NaN of either sign). ``out`` may be ``x``."""
    inf = _INF_BITS[x.dtype]
    if not (x.flags.c_contiguous and out.flags.c_contiguous):
        bits, dst = x.view(np.int16), out.view(np.int16)
        np.maximum(bits, 0, out=dst)  # negative numbers, -0.0 and negative NaN: 0
        if dst.size and dst.max() > inf:  # positive NaN: rare, found by one fast pass
            np.copyto(dst, 0, where=dst > inf)
        return
    src, dst = x.reshape(-1).view(np.int16), out.reshape(-1).view(np.int16)
    c = max(1, min(BITS_CHUNK, src.size))
    for i in range(0, src.size, c):
        d = dst[i:i + c]
        np.maximum(src[i:i + c], _ZEROS[:d.size], out=d)
        if d.max() > inf:
            np.copyto(d, 0, where=d > inf)


def clamp(x: np.ndarray, low, high, table_of: Callable[[], np.ndarray], out: np.ndarray
          ) -> np.ndarray:
    """Clamp of a 16-bit float to [low, high] (two values of x's type, low <= high), as numpy's
    f32 clip gives it (x below low: low; above high: high; else x, a tie and NaN included), by
    integer min/max on the bits a chunk at a time. The sign-magnitude layout makes an int16
    compare like the floats among non-negative values and a uint16 compare like magnitudes
    among negative ones, so: low > 0 is a clip of the int16 view; high < 0 a clip of the uint16
    view (bounds swapped); low < 0 < high a uint16 minimum with low (only negatives reach it)
    then an int16 minimum with high (only positives reach it); low = +0.0 an int16 maximum with
    0 then a minimum with high, unless the chunk holds a -0.0 (which must stay). A chunk with a
    NaN, and other bounds (a zero high, low = -0.0), take the table ``table_of()``. ``out``:
    C-contiguous, x's shape and type (x itself is allowed)."""
    lo, hi = int(np.asarray(low).view(np.uint16)), int(np.asarray(high).view(np.uint16))
    lo_f, hi_f = float(low), float(high)
    if lo_f > 0:
        plan = "above"
    elif hi_f < 0:
        plan = "below"
    elif lo_f < 0 < hi_f:
        plan = "around"
    elif lo == 0 and hi_f > 0:
        plan = "from_zero"
    else:
        return lookup(table_of(), x, out)
    inf = _INF_BITS[x.dtype]
    src = np.ascontiguousarray(x).reshape(-1).view(np.uint16)
    dst = out.reshape(-1).view(np.uint16)
    c = max(1, min(BITS_CHUNK, src.size))
    # the bounds as whole chunks: numpy's integer minimum and maximum are vectorised only
    # between two contiguous arrays (with a scalar they run 5-8x slower)
    low_bits, high_bits = np.full(c, lo, np.uint16), np.full(c, hi, np.uint16)
    for i in range(0, src.size, c):
        s, d = src[i:i + c], dst[i:i + c]
        si, di = s.view(np.int16), d.view(np.int16)
        m = s.size
        low, high = low_bits[:m], high_bits[:m]
        if (si.max() > inf or s.max() > 0x8000 | inf  # a NaN of either sign
                or plan == "from_zero" and si.min() == -0x8000):  # a -0.0
            np.take(table_of(), s, out=d, mode="wrap")
        elif plan == "above":
            np.maximum(si, low.view(np.int16), out=di)
            np.minimum(di, high.view(np.int16), out=di)
        elif plan == "below":
            np.maximum(s, high, out=d)
            np.minimum(d, low, out=d)
        elif plan == "around":
            np.minimum(s, low, out=d)
            np.minimum(di, high.view(np.int16), out=di)
        else:
            np.maximum(si, _ZEROS[:m], out=di)
            np.minimum(di, high.view(np.int16), out=di)
    return out


# The sign-magnitude bits as int16 order as the values unless both values are negative, when
# the order is reversed; flipping every bit of both (xor with -1) reverses it back. So with
# t = (a & b) >> 15 (-1 where both are negative, else 0), ``a ^ t`` and ``b ^ t`` compare as the
# values do, and ``max(a ^ t, b ^ t) ^ t`` is the larger value's bits -- except that -0.0 and
# 0.0 differ here (a chunk holding a -0.0 where it matters takes the keys below), and a NaN
# has no place in the order (a chunk holding one compares in f32).
_PICK = {np.greater: np.maximum, np.less: np.minimum}
_ZERO_SIDES = {np.greater: (1,), np.less: (0,)}  # Maximum errs on (+0, -0), Minimum on (-0, +0)


def select(a: np.ndarray, b: np.ndarray, compare, out: np.ndarray) -> np.ndarray:
    """``compare(a, b) ? a : b`` element by element (Maximum's ``a > b ? a : b``; ``compare``
    is np.greater or np.less), for two 16-bit float arrays of one type, either of one element
    or both of one shape: compared as in f32 (see :func:`compare`), and the chosen element's
    own bits taken (what rounding the f32 choice back gives, NaN payloads included), with no
    rounding pass. ``out``: a C-contiguous array of the broadcast shape (``a`` itself is
    allowed)."""
    dst = out.reshape(-1).view(np.uint16)
    c = max(1, min(SELECT_CHUNK, dst.size))
    chosen, mask, diff = np.empty(c, bool), np.empty(c, np.uint16), np.empty(c, np.uint16)
    pick = _PICK[compare]
    for i, m, parts, keys, plan in _pairs(a, b, dst.size, c, _ZERO_SIDES[compare]):
        d = dst[i:i + m]
        halves = [p.view(np.uint16) for p in parts]
        if plan == "bits":  # the int16 bits order as the values
            pick(*keys, out=d.view(np.int16))
        elif plan == "flip":
            t = keys[2]
            pick(keys[0], keys[1], out=d.view(np.int16))
            np.bitwise_xor(d.view(np.int16), t, out=d.view(np.int16))
        else:
            compare(*keys, out=chosen[:m])
            # b ^ ((a ^ b) & (0xFFFF where chosen)): a masked choice without a branch per
            # element (numpy's where= and np.where branch, and cost 10x on a random choice)
            np.copyto(mask[:m], chosen[:m])
            np.negative(mask[:m], out=mask[:m])
            np.bitwise_xor(*halves, out=diff[:m])  # read a before the output (maybe a) is set
            diff[:m] &= mask[:m]
            np.bitwise_xor(halves[1], diff[:m], out=d)
    return out


def compare(a: np.ndarray, b: np.ndarray, fn, out: np.ndarray) -> np.ndarray:
    """``fn(a, b)`` for a numpy comparison ``fn`` (equal, less ...) of two 16-bit float arrays
    of one type, either of one element or both of one shape, into the bool array ``out`` (the
    broadcast shape, C-contiguous), a chunk at a time: on the int16 bits when one side has no
    negative value, on the bits flipped where both are negative (see above) otherwise, on int16
    keys -- the bits for a non-negative value, minus the magnitude for a negative one, so that
    -0.0 and 0.0 are both 0 -- in a chunk with a -0.0, and in f32 in a chunk with a NaN."""
    dst = out.reshape(-1)
    c = max(1, min(SELECT_CHUNK, dst.size))
    for i, m, _parts, keys, _plan in _pairs(a, b, dst.size, c, (0, 1)):
        fn(keys[0], keys[1], out=dst[i:i + m])
    return out


def _stats(bits: np.ndarray, inf: int) -> tuple[bool, int]:
    """(whether int16 bits hold a NaN, their minimum), by three reductions."""
    if bits.size == 0:
        return False, 0
    low = int(np.minimum.reduce(bits))
    nan = int(np.maximum.reduce(bits)) > inf or (
        low < 0 and int(np.maximum.reduce(bits.view(np.uint16))) > 0x8000 | inf)
    return nan, low


def _pairs(a: np.ndarray, b: np.ndarray, n: int, c: int, zero_sides: tuple):
    """Chunks of ``c`` elements of two 16-bit float arrays (one of them may be a single
    element, repeated): (start, size, (a part, b part), keys, plan). The plan says what the
    keys are: "bits", the int16 bits themselves (one side has no negative value); "flip", the
    bits xor t and t itself (see above); "keys", int16 order keys, or the values in f32 for a
    chunk with a NaN -- taken when a NaN or, on a side in ``zero_sides``, a -0.0 is in the
    chunk. The arrays yielded are reused."""
    inf = _INF_BITS[a.dtype]
    sides = []
    for v in (a, b):
        flat = np.ascontiguousarray(v).reshape(-1)
        if v.size == 1:  # a whole chunk of it, keyed once (see _ZEROS)
            part = np.full(c, flat[0])
            key = _key(part, np.empty(c, np.int16), np.empty(c, np.int16), inf)
            sides.append((part, key, _widen(part, None) if key is None else None, True,
                          _stats(part.view(np.int16)[:1], inf)))
        else:
            sides.append((flat, np.empty(c, np.int16), None, False, None))
    sign = np.empty(c, np.int16)
    flips = np.empty((3, c), np.int16)
    wide = None  # f32 chunks, made when a chunk holds a NaN
    for i in range(0, n, c):
        m = min(c, n - i)
        parts = [v[:m] if fixed else v[i:i + m] for v, _k, _w, fixed, _s in sides]
        bits = [p.view(np.int16) for p in parts]
        stats = [st if fixed else _stats(h, inf)
                 for h, (_v, _k, _w, fixed, st) in zip(bits, sides)]
        if not any(nan for nan, _low in stats) and not any(
                stats[k][1] == -0x8000 for k in zero_sides):
            if stats[0][1] >= 0 or stats[1][1] >= 0:
                yield i, m, parts, bits, "bits"
            else:
                t, ka, kb = flips[0, :m], flips[1, :m], flips[2, :m]
                np.bitwise_and(bits[0], bits[1], out=t)
                np.right_shift(t, 15, out=t)
                np.bitwise_xor(bits[0], t, out=ka)
                np.bitwise_xor(bits[1], t, out=kb)
                yield i, m, parts, (ka, kb, t), "flip"
            continue
        keys = []
        for part, (_v, key, _w, fixed, _s) in zip(parts, sides):
            if fixed:
                keys.append(None if key is None else key[:m])
            else:
                keys.append(_key(part, key[:m], sign[:m], inf))
        if keys[0] is None or keys[1] is None:  # a NaN: compare in f32
            wide = wide or (np.empty(c, F32), np.empty(c, F32))
            keys = [w[:m] if fixed and w is not None else _widen(p, buf[:m])
                    for p, buf, (_v, _k, w, fixed, _s) in zip(parts, wide, sides)]
        yield i, m, parts, keys, "keys"


def _key(part: np.ndarray, key: np.ndarray, sign: np.ndarray, inf: int) -> np.ndarray | None:
    """The int16 order keys of a chunk of 16-bit floats (``key`` filled, or the bits
    themselves when no value is negative), or None when the chunk holds a NaN."""
    bits = part.view(np.int16)
    if bits.size == 0:
        return bits
    if bits.min() >= 0:  # no negative value (nor -0.0): the bits order as the values
        return None if bits.max() > inf else bits
    np.bitwise_and(bits, 0x7FFF, out=key)  # scalar operands: fast here (see _ZEROS)
    if key.max() > inf:
        return None
    np.right_shift(bits, 15, out=sign)  # -1 for a negative value, else 0
    np.bitwise_xor(key, sign, out=key)
    np.subtract(key, sign, out=key)  # -magnitude for a negative value
    return key


def _widen(x: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """A 1-D 16-bit float array (a chunk) in f32, into ``out`` (or a new array)."""
    if out is None:
        out = np.empty(x.shape, F32)
    if x.dtype == F16:
        return np.take(_F16_TO_F32, x.view(np.uint16), out=out, mode="clip")
    wide = out.view(np.uint32)  # bf16 is the high half of an f32
    np.copyto(wide, x.view(np.uint16))
    wide <<= 16
    return out


# --- widening -------------------------------------------------------------------------------

_F16_TO_F32 = _ALL.view(F16).astype(F32)
_F16_TO_F32.flags.writeable = False


def to_f32(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """An f16 array's values in f32 (exact), by lookup: about 1.5x faster than numpy's cast.
    Other types: numpy's cast (``x`` itself when already f32)."""
    if x.dtype != F16 or x.size < USE_MIN:
        if out is None:
            return x if x.dtype == F32 else x.astype(F32)
        np.copyto(out, x)
        return out
    if out is None:
        out = buffers.empty(x.shape, F32)
    src = np.ascontiguousarray(x).reshape(-1).view(np.uint16)
    dst = out.reshape(-1)
    for i in range(0, src.size, CHUNK):
        np.take(_F16_TO_F32, src[i:i + CHUNK], out=dst[i:i + CHUNK], mode="clip")
    return out



# --- two-input arithmetic of f16 -------------------------------------------------------------
# numpy's f16 add/multiply/divide loops convert every element to f32 and back in scalar code
# (about 6.6 ns an element), and so do its f16 <-> f32 casts (1.9 and 3.1 ns). arith() gets
# the same results from numpy's vectorised int32 and f32 loops over chunks of ARITH_CHUNK
# elements with temporaries made once per call (0.06-0.2 ns an element a pass, 16-20 passes
# and 4 reductions):
#
# * Widening (3 passes an input): the int16 bits sign-extended to int32, shifted left by 13 and
#   masked to the sign and the 15 bits below it are the f32 bits of the f16 value times
#   2^-112, exactly: the f16 exponent and mantissa fields land in the f32 exponent's low bits
#   and the mantissa's high bits, and an f16 subnormal becomes the f32 subnormal of the same
#   scaled value. Add and Subtract work on these scaled values (a sum of two multiples of
#   2^-136 is exact where the scaled f32 is subnormal, and rounds as the unscaled f32 sum
#   elsewhere); Divide divides them (the scales cancel); Multiply and SquaredDifference unscale
#   (a product rounded in the scaled subnormal range would be rounded twice).
# * Rounding a scaled sum to f16 (6 passes): its magnitude bits are those of an f16 value
#   shifted left by 13 (bits 28..13), so round to nearest even on the integer bits -- add
#   0xFFF plus the lowest kept bit, shift right by 13 -- rounds it, carries into the exponent
#   included; subnormal sums are exact and need no rounding.
# * Rounding an unscaled f32 x (8 passes): C = 1.5 * 2^(e+13) for x's exponent e raised to at
#   least -14 (x's bits & 0x7F800000, a maximum, plus a constant), then (x + C) - C is x
#   rounded to the f16 grid by the FPU (x + C stays in C's binade, whose spacing is that
#   grid, below 2^-14 too), and times 2^-112 it is scaled (exact: an f16 value).
# * The sign: the rounded bits >> 13 hold the f16 exponent and mantissa in their low 15 bits;
#   bit 15 is x's sign bit (a zero result of a negative x too: 3 int32 passes), or a's xor b's
#   for a product or a quotient (3 int16 passes), or 0 for a square; then the cast to int16.
# * Infinities and NaNs widen to finite values, so a chunk holding one (two reductions an
#   input, which also give the largest magnitude) is computed by the caller's direct route, as
#   is a Divide chunk whose quotient holds a NaN (0 / 0). Magnitudes that may round to infinity
#   (told by the inputs' largest magnitudes, or Divide's quotient) are clamped to 65520 first.
#
# numpy's per-call cost (0.5-2 us here) matters at this chunk size: constants are 0-d arrays (a
# Python int operand costs twice as much), reductions go through the ufunc, and views are made
# once per chunk size.

ARITH_CHUNK = 1 << 17
ARITH_OPS = frozenset(("add", "subtract", "multiply", "divide", "squared_difference"))
_SCALED = frozenset(("add", "subtract"))
_SIGN_OF_INPUTS = frozenset(("multiply", "divide"))


def _c(value, dtype) -> np.ndarray:
    v = np.array(value, dtype)
    v.flags.writeable = False
    return v


_WIDEN_MASK = _c(-0x70002000, np.int32)  # 0x8FFFE000
_EXP_BITS = _c(0x7F800000, np.int32)
_MAGIC = _c((13 << 23) | 0x400000, np.int32)  # added to the exponent bits: 1.5 * 2^(e + 13)
_SIGN16 = _c(-0x8000, np.int32)
_SIGN_BIT = _c(-0x8000, np.int16)
_ONE, _BIAS = _c(1, np.int32), _c(0xFFF, np.int32)
_THIRTEEN, _SIXTEEN = _c(13, np.int32), _c(16, np.int32)
_UNSCALE, _SCALE = _c(2.0 ** 112, F32), _c(2.0 ** -112, F32)
_OVER = 65520.0  # from here (in magnitude) an f32 rounds to f16's infinity
_MAGNITUDES = _F16_TO_F32[:0x7C00].astype(np.float64)  # by the bits of a finite |x|
_max, _min = np.maximum.reduce, np.minimum.reduce
# numpy's integer maximum with a scalar is 5-8x slower than between two arrays (see _ZEROS)
_LOWEST = np.full(ARITH_CHUNK, 113 << 23, np.int32)  # the bits of 2^-14, f16's smallest normal
_LOWEST.flags.writeable = False


class _Chunk:
    """The int32 temporaries a, b, x, c, v for chunks of ``m`` elements (with f32 views), and
    the computation of one chunk. ``fixed``: a widened one-element side, a whole chunk of it."""

    def __init__(self, m: int, name: str, fixed: dict):
        self.i = {k: fixed[k][:m] if k in fixed else np.empty(m, np.int32) for k in "abxcv"}
        self.f = {k: v.view(F32) for k, v in self.i.items()}
        self.name = name
        self.low = _LOWEST[:m] if m <= _LOWEST.size else np.full(m, 113 << 23, np.int32)

    def widen(self, side: str, src16: np.ndarray) -> None:
        """f16 bits (an int16 array) into temporary ``side``: the f32 bits of the values
        times 2^-112, exactly."""
        widen_scaled(src16, self.i[side])

    def compute(self) -> np.ndarray:
        """The f32 result of the widened a and b into x (scaled for Add and Subtract, else
        not); returns x's f32 view."""
        f, name = self.f, self.name
        a, b, x = f["a"], f["b"], f["x"]
        if name == "add":
            np.add(a, b, out=x)
        elif name == "subtract":
            np.subtract(a, b, out=x)
        elif name == "divide":
            np.divide(a, b, out=x)
        elif name == "multiply":
            y = f["v"]
            np.multiply(a, _UNSCALE, out=x)
            np.multiply(b, _UNSCALE, out=y)
            np.multiply(x, y, out=x)
        else:  # squared_difference: the f32 difference, squared
            np.subtract(a, b, out=x)
            np.multiply(x, _UNSCALE, out=x)
            np.multiply(x, x, out=x)
        return x

    def round(self, out16: np.ndarray, sign16: np.ndarray | None = None) -> None:
        """x rounded to f16 (nearest, ties to even) into the int16 array ``out16`` (c, v and,
        for a scaled x, x's magnitude bits are overwritten). The magnitudes are below 65520
        (scaled or not, as x). The sign bit: x's, or ``sign16`` (int16 bits, only the sign
        bit set, or None for x's), or none for SquaredDifference (whose x is >= +0)."""
        i, f = self.i, self.f
        x, c, v = i["x"], i["c"], i["v"]
        if self.name in _SCALED:
            np.right_shift(x, _THIRTEEN, out=c)
            np.bitwise_and(c, _ONE, out=c)  # the lowest bit kept: a tie rounds to even
            np.add(x, c, out=x)
            np.add(x, _BIAS, out=x)  # the sign bit stays: the magnitude is < 2^31 - 2^13
            np.right_shift(x, _THIRTEEN, out=v)
        else:
            np.bitwise_and(x, _EXP_BITS, out=c)
            np.maximum(c, self.low, out=c)
            np.add(c, _MAGIC, out=c)
            np.add(f["x"], f["c"], out=f["v"])
            np.subtract(f["v"], f["c"], out=f["v"])  # f16 values (a zero's sign lost)
            np.multiply(f["v"], _SCALE, out=f["v"])  # exact, and now scaled
            np.right_shift(v, _THIRTEEN, out=v)
        # v's low 16 bits: 0, the f16 exponent and mantissa
        if self.name == "squared_difference":
            np.copyto(out16, v, casting="unsafe")
        elif sign16 is not None:  # cheaper on 16 bits
            np.copyto(out16, v, casting="unsafe")
            np.bitwise_or(out16, sign16, out=out16)
        else:  # bit 15 is x's sign bit (that of a zero result of a negative x too)
            np.right_shift(x, _SIXTEEN, out=c)
            np.bitwise_and(c, _SIGN16, out=c)
            np.bitwise_or(v, c, out=v)
            np.copyto(out16, v, casting="unsafe")


def widen_scaled(src16: np.ndarray, dst: np.ndarray) -> None:
    """f16 bits (an int16 array) into ``dst`` (int32, src16's shape): the f32 bits of the
    values times 2^-112, exactly; an infinity or a NaN becomes a finite value (2^-96 or more
    in magnitude)."""
    np.copyto(dst, src16)  # sign-extended
    np.left_shift(dst, _THIRTEEN, out=dst)
    np.bitwise_and(dst, _WIDEN_MASK, out=dst)


def _largest(bits: np.ndarray) -> float | None:
    """The largest magnitude among f16 bits (an int16 array), by two reductions; None when an
    infinity or a NaN is among them."""
    top, top_negative = int(_max(bits)), int(_max(bits.view(np.uint16)))
    if top >= 0x7C00 or top_negative >= 0xFC00:
        return None
    return float(_MAGNITUDES[max(top, top_negative - 0x8000 if top_negative >= 0x8000 else 0)])


def _may_overflow(name: str, ma: float, mb: float) -> bool | None:
    """Whether a result may round to f16's infinity, by the inputs' largest magnitudes (None:
    they do not tell)."""
    if name in _SCALED:
        return ma + mb >= _OVER
    if name == "multiply":
        return ma * mb >= _OVER
    if name == "squared_difference":
        return (ma + mb) * (ma + mb) >= _OVER
    return None


def arith(name: str, a: np.ndarray, b: np.ndarray, direct, out: np.ndarray) -> np.ndarray:
    """Add, Subtract, Multiply, Divide or SquaredDifference (``name``, one of ARITH_OPS) of
    two f16 arrays, either of one element or both of one shape, into ``out`` (C-contiguous,
    f16, the broadcast shape; ``a`` itself is allowed): the f32 computation rounded once to
    f16, bit for bit, a chunk at a time (see above). ``direct(a_part, b_part, out_part)``
    computes a chunk that holds an infinity or a NaN (1-D f16 parts; a one-element side stays
    one element)."""
    if name not in ARITH_OPS:
        raise ValueError(f"half.arith computes {sorted(ARITH_OPS)}, not {name!r}")
    dst = out.reshape(-1).view(np.int16)
    n = dst.size
    c = max(1, min(ARITH_CHUNK, n))
    sides, fixed = [], {}
    for key, v in (("a", a), ("b", b)):
        bits = np.ascontiguousarray(v).reshape(-1).view(np.int16)
        if v.size == 1 and n > 1:  # widened and checked once, as a whole chunk (see _ZEROS)
            fixed[key] = np.empty(c, np.int32)
            widen_scaled(np.broadcast_to(bits, (c,)), fixed[key])
            sides.append((bits, _largest(bits), True))
        else:
            sides.append((bits, None, False))
    (a_bits, a_top, a_fixed), (b_bits, b_top, b_fixed) = sides
    full = _Chunk(c, name, fixed)
    signs = np.empty(c, np.int16)
    limit = _OVER * (2.0 ** -112 if name in _SCALED else 1.0)
    for i in range(0, n, c):
        m = min(c, n - i)
        chunk = full if m == c else _Chunk(m, name, fixed)
        ap = a_bits if a_fixed else a_bits[i:i + m]
        bp = b_bits if b_fixed else b_bits[i:i + m]
        ma = a_top if a_fixed else _largest(ap)
        mb = None if ma is None else b_top if b_fixed else _largest(bp)
        o = dst[i:i + m]
        if mb is None:
            direct(ap.view(F16), bp.view(F16), o.view(F16))
            continue
        sign = None
        if name in _SIGN_OF_INPUTS:  # a product's or a quotient's sign: a's xor b's
            sign = signs[:m]
            np.bitwise_xor(ap, bp, out=sign)
            np.bitwise_and(sign, _SIGN_BIT, out=sign)
        if not a_fixed:
            chunk.widen("a", ap)
        if not b_fixed:
            chunk.widen("b", bp)
        x = chunk.compute()
        clamp = _may_overflow(name, ma, mb)
        if clamp is None:  # Divide: the quotient tells (a NaN comes only from 0 / 0)
            high, low = float(_max(x)), float(_min(x))
            if np.isnan(high):
                direct(ap.view(F16), bp.view(F16), o.view(F16))
                continue
            clamp = high >= limit or low <= -limit
        if clamp:
            np.clip(x, -limit, limit, out=x)
        chunk.round(o, sign)
    return out
