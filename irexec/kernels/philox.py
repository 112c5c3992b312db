"""The random number generators of OpenVINO's RandomUniform-8 and Multinomial-13, vectorised.

Two streams of 32-bit words, as OpenVINO's reference (src/core/reference/src/utils/
philox_generator.cpp) makes them:

* ``alignment="tensorflow"``: Philox4x32-10. One block is four words from a 128-bit counter
  ``(n_lo, n_hi, op_lo, op_hi)`` and a 64-bit key ``(key_lo, key_hi)``: n counts the blocks
  (starting at the state's n), op is op_seed (or the state's counter once it is non-zero), key
  is global_seed. Ten rounds; after each of the first nine the key words are raised by
  0x9E3779B9 and 0xBB67AE85. Block i uses n + i (carrying into the op words past 2**64).
* ``alignment="pytorch"``: MT19937 seeded with the low 32 bits of global_seed (op_seed unused),
  numpy's own MT19937 bit generator given the same seeded state.

``uniform`` turns the words into an output type as each alignment does (docs/numerics.md has
the table). Everything is array arithmetic over uint32/uint64; Philox runs in blocks that stay
in the cache, with preallocated buffers.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

# Philox4x32 constants (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3").
_MUL_N = np.uint64(0xD2511F53)  # multiplies word 0 (n's low half)
_MUL_C = np.uint64(0xCD9E8D57)  # multiplies word 2 (the counter's low half)
_RAISE_LO, _RAISE_HI = 0x9E3779B9, 0xBB67AE85
_ROUNDS = 10
_CHUNK = 1 << 16  # blocks per pass: the buffers (2.5 MiB) stay in the caches
_M64 = (1 << 64) - 1
SKIP = 256  # how far a call moves the stream on, per unit (OpenVINO's, after TensorFlow's)

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"f16": np.dtype(np.float16), "bf16": BF16, "f32": np.dtype(np.float32),
          "f64": np.dtype(np.float64), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64)}


def philox_blocks(key: int, n: int, counter: int, blocks: int) -> np.ndarray:
    """``blocks`` Philox4x32-10 blocks, as a [blocks, 4] uint32 array: block i from the
    counter (n + i, counter) (n's 64 bits carrying into counter) and the 64-bit key."""
    out = np.empty((blocks, 4), np.uint32)
    for start, words in philox_passes(key, n, counter, blocks):
        out[start:start + len(words)] = words
    return out


def philox_passes(key: int, n: int, counter: int, blocks: int):
    """The same blocks, a pass at a time: (first block's index, [m, 4] uint32 words), the words
    valid until the next pass (a buffer reused, so that a caller converting them stays in the
    caches)."""
    key, n, counter = key & _M64, n & _M64, counter & _M64
    done = 0
    while done < blocks:
        # Up to the point where n wraps past 2**64: there the counter carries by one.
        part = min(blocks - done, (1 << 64) - n)
        for start, words in _philox_run(key, n, counter, part):
            yield done + start, words
        done += part
        n, counter = (n + part) & _M64, (counter + (n + part > _M64)) & _M64


def _philox_run(key: int, n: int, counter: int, m_all: int):
    """Blocks n, n+1, ... n+m_all-1 (no wrap of n inside), a pass at a time (``philox_passes``).

    A round is two 32x32->64 products (uint64 buffers whose uint32 halves are read as views:
    little-endian, [..., 0] low, [..., 1] high) and four xors; the products alternate between
    two buffers so that the low halves the next round needs are read in place, not copied.
    Round 1 is done by hand: the counter's words are the same in every block."""
    size = min(_CHUNK, m_all)
    out = np.empty((size, 4), np.uint32)
    prods = [np.empty((2, size), np.uint64) for _ in range(2)]  # [n product, counter product]
    halves = [p.view(np.uint32).reshape(2, size, 2) for p in prods]
    words0, words2 = np.empty(size, np.uint32), np.empty(size, np.uint32)
    start = np.empty(size, np.uint64)
    steps = np.arange(size, dtype=np.uint64)
    c2, c3 = counter & 0xFFFFFFFF, counter >> 32
    p1 = c2 * int(_MUL_C)
    for s in range(0, m_all, size):
        m = min(size, m_all - s)
        np.add(steps[:m], np.uint64(n + s), out=start[:m])
        n_words = start[:m].view(np.uint32).reshape(-1, 2)
        k0, k1 = key & 0xFFFFFFFF, key >> 32
        w0, w2 = words0[:m], words2[:m]
        np.multiply(n_words[:, 0], _MUL_N, out=prods[0][0, :m])
        np.bitwise_xor(n_words[:, 1], np.uint32(((p1 >> 32) ^ k0) & 0xFFFFFFFF), out=w0)
        w1 = np.uint32(p1 & 0xFFFFFFFF)
        np.bitwise_xor(halves[0][0, :m, 1], np.uint32(c3 ^ k1), out=w2)
        w3 = halves[0][0, :m, 0]
        for r in range(1, _ROUNDS):
            k0, k1 = (k0 + _RAISE_LO) & 0xFFFFFFFF, (k1 + _RAISE_HI) & 0xFFFFFFFF
            prod, half = prods[r % 2], halves[r % 2]
            np.multiply(w0, _MUL_N, out=prod[0, :m])
            np.multiply(w2, _MUL_C, out=prod[1, :m])
            np.bitwise_xor(half[1, :m, 1], w1, out=w0)
            w0 ^= np.uint32(k0)
            np.bitwise_xor(half[0, :m, 1], w3, out=w2)
            w2 ^= np.uint32(k1)
            w1, w3 = half[1, :m, 0], half[0, :m, 0]
        block = out[:m]
        block[:, 0], block[:, 1], block[:, 2], block[:, 3] = w0, w1, w2, w3
        yield s, block


def mt19937_words(seed: int, count: int) -> np.ndarray:
    """The first ``count`` 32-bit outputs of MT19937 seeded with ``seed & 0xFFFFFFFF`` (the
    classic init_genrand seeding PyTorch's CPU generator uses), as uint32."""
    legacy = np.random.RandomState(seed & 0xFFFFFFFF).get_state()
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": legacy[1], "pos": legacy[2]}}
    return bits.random_raw(count).astype(np.uint32)


# --- from words to an output type -------------------------------------------------------------

def words_per_value(kind: str, alignment: str, wide_i64: bool) -> int:
    """32-bit words one output value takes: f64 and i64 take two (PyTorch's i64 only when min
    or max is above 2**32 - 1: ``wide_i64``)."""
    if kind == "f64":
        return 2
    if kind == "i64":
        return 2 if alignment == "tensorflow" or wide_i64 else 1
    return 1


def pytorch_wide_i64(mn: int, mx: int) -> bool:
    """PyTorch's i64 draws two words per value unless min and max both fit uint32."""
    return not (mn <= 0xFFFFFFFF and mx <= 0xFFFFFFFF)


def _tf_unit(words: np.ndarray, kind: str) -> np.ndarray:
    """TensorFlow's [0, 1) floats: the low mantissa bits of a word under exponent 0, minus 1."""
    if kind == "f32":
        bits = words & np.uint32(0x7FFFFF)
        bits |= np.uint32(0x3F800000)
        unit = bits.view(np.float32)
        unit -= np.float32(1)
        return unit
    if kind == "f16":
        bits = (words & np.uint32(0x3FF)).astype(np.uint16) | np.uint16(0x3C00)
        return (bits.view(np.float16).astype(np.float32) - np.float32(1)).astype(np.float16)
    if kind == "bf16":
        bits = (words & np.uint32(0x7F)).astype(np.uint16) | np.uint16(0x3F80)
        return to_bf16(bits.view(BF16).astype(np.float32) - np.float32(1))
    # f64 from a pair: 20 bits of the first word, 32 of the second
    pairs = words.reshape(-1, 2).astype(np.uint64)
    bits = ((pairs[:, 0] & np.uint64(0xFFFFF)) << np.uint64(32)) | pairs[:, 1]
    bits |= np.uint64(1023 << 52)
    unit = bits.view(np.float64)
    unit -= 1.0
    return unit


def to_bf16(values: np.ndarray) -> np.ndarray:
    """f32 -> bf16 as OpenVINO's ``bfloat16(float)`` rounds: half of the dropped unit is added
    only when the kept part is odd (an odd result rounds to nearest, ties up; an even one is
    truncated), which is not IEEE round-to-nearest-even."""
    bits = np.ascontiguousarray(values, np.float32).view(np.uint32)
    bits = bits + ((bits & np.uint32(0x10000)) >> np.uint32(1))
    return (bits >> np.uint32(16)).astype(np.uint16).view(BF16)


def _round(values: np.ndarray, dtype) -> np.ndarray:
    """f32 values rounded to f16 (IEEE) or bf16 (OpenVINO's rule, ``to_bf16``)."""
    return to_bf16(values) if dtype == BF16 else values.astype(dtype)


def _narrow_affine(unit32: np.ndarray, mn, mx, dtype, per_step: bool) -> np.ndarray:
    """unit * (max - min) + min for f16/bf16: (max - min) rounded to the type; the product and
    the sum in f32, each rounded to the type (``per_step``, OpenVINO's float16/bfloat16
    operators), or only the sum (PyTorch's f32 expression, cast once)."""
    lo = np.asarray(mn, dtype).reshape(1).astype(np.float32)
    hi = np.asarray(mx, dtype).reshape(1).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        span = _round(hi - lo, dtype).astype(np.float32)[0]
        prod = unit32 * span
        if per_step:
            prod = _round(prod, dtype).astype(np.float32)
        prod += lo[0]
        return _round(prod, dtype)


def _modulo(values: np.ndarray, mn: int, mx: int, bits: int) -> np.ndarray:
    """values % (max - min) + min in C++ unsigned arithmetic of ``bits`` bits (values unsigned)."""
    mask = (1 << bits) - 1
    utype = np.uint32 if bits == 32 else np.uint64
    span = utype((mx - mn) & mask)
    out = values.astype(utype, copy=False) % span
    out += utype(mn & mask)
    return out.view(np.int32 if bits == 32 else np.int64)


def convert_words(words: np.ndarray, kind: str, mn, mx, alignment: str) -> np.ndarray:
    """Output values of type ``kind`` (f16, bf16, f32, f64, i32, i64) in [mn, mx) from the
    stream's words (as many as ``words_per_value`` says per value), as OpenVINO's reference
    converters compute them. ``mn``/``mx`` are 0-d arrays of the output type."""
    if alignment == "tensorflow":
        if kind in ("i32", "i64"):
            lo, hi = int(mn), int(mx)
            if kind == "i32":
                return _modulo(words, lo, hi, 32)
            pairs = words.reshape(-1, 2).astype(np.uint64)
            values = (pairs[:, 1] << np.uint64(32)) + pairs[:, 0]  # second word high
            return _modulo(values, lo, hi, 64)
        unit = _tf_unit(words, kind)
        if kind in ("f16", "bf16"):
            dtype = np.float16 if kind == "f16" else BF16
            return _narrow_affine(unit.astype(np.float32), mn, mx, dtype, per_step=True)
        dtype = unit.dtype
        lo, hi = dtype.type(mn), dtype.type(mx)
        span = dtype.type(hi - lo)
        if span != 1 or lo != 0:
            unit *= span
            unit += lo
        return unit
    # PyTorch: a word's low mantissa-digits bits times 2**-digits
    if kind in ("i32", "i64"):
        lo, hi = int(mn), int(mx)
        if kind == "i32":
            return _modulo(words, lo, hi, 32)
        if words_per_value(kind, alignment, pytorch_wide_i64(lo, hi)) == 1:
            # int64(word) % (max - min) + min, signed: the word is non-negative
            out = np.fmod(words.astype(np.int64), np.int64(hi - lo))
            out += np.int64(lo)
            return out
        pairs = words.reshape(-1, 2).astype(np.uint64)
        values = (pairs[:, 0] << np.uint64(32)) + pairs[:, 1]  # first word high
        return _modulo(values, lo, hi, 64)
    if kind == "f64":
        pairs = words.reshape(-1, 2).astype(np.uint64)
        values = ((pairs[:, 0] << np.uint64(32)) + pairs[:, 1]) & np.uint64((1 << 53) - 1)
        unit = values.astype(np.float64) * (2.0 ** -53)
        lo, hi = np.float64(mn), np.float64(mx)
        unit *= np.float64(hi - lo)
        unit += lo
        return unit
    digits = {"f32": 24, "f16": 11, "bf16": 8}[kind]
    unit = (words & np.uint32((1 << digits) - 1)).astype(np.float32)
    unit *= np.float32(2.0 ** -digits)
    if kind == "f32":
        lo, hi = np.float32(mn), np.float32(mx)
        unit *= np.float32(hi - lo)
        unit += lo
        return unit
    dtype = np.float16 if kind == "f16" else BF16
    return _narrow_affine(unit, mn, mx, dtype, per_step=False)


def uniform(count: int, kind: str, mn, mx, global_seed: int, op_seed: int, alignment: str,
            state: tuple[int, int] = (0, 0), out: np.ndarray | None = None) -> np.ndarray:
    """``count`` values of type ``kind`` in [mn, mx), as OpenVINO's RandomUniform makes them
    from this state (n, counter); see ``next_state`` for the state after the call. ``out``: a
    flat array of ``count`` values of the type to write them into (returned)."""
    per = words_per_value(kind, alignment,
                          kind == "i64" and pytorch_wide_i64(int(mn), int(mx)))
    if out is None:
        out = np.empty(count, DTYPES[kind])
    if alignment != "tensorflow":
        out[...] = convert_words(mt19937_words(global_seed, count * per), kind, mn, mx,
                                 alignment)
        return out
    n, counter = state
    per_block = 4 // per
    blocks = -(-count // per_block)
    for first, words in philox_passes(global_seed, n, counter if counter > 0 else op_seed,
                                      blocks):
        values = convert_words(words.reshape(-1), kind, mn, mx, alignment)
        start = first * per_block
        stop = min(start + len(values), count)
        out[start:stop] = values[:stop - start]
    return out


def next_state(state: tuple[int, int], count: int, alignment: str) -> tuple[int, int]:
    """The (n, counter) state a further call starts from, after ``count`` values: n moves on
    by 256 per value (OpenVINO's CPU plugin, TensorFlow's reservation), carrying into the
    counter; PyTorch's stream starts afresh every call (its state never moves)."""
    if alignment != "tensorflow":
        return state
    n, counter = state
    moved = n + count * SKIP
    return moved & _M64, (counter + (moved >> 64)) & _M64
