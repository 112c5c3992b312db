"""Special functions numpy lacks, vectorised: ``erf``, and the two forms of Gelu built on erf and
tanh (``gelu_erf``, ``gelu_tanh``: Gelu-2 and Gelu-7 share them).

``erf`` follows the rational approximations of fdlibm's s_erf.c (Sun Microsystems, 1993; the
coefficients are theirs), evaluated in float64 over whole arrays: each element takes the branch of
its magnitude, and the result is within 1 ulp of the true value in float64.
"""

from __future__ import annotations

import math

import numpy as np

from irexec.kernels.numeric import filled

_ERX = 8.45062911510467529297e-01
_EFX = 1.28379167095512586316e-01
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _poly(coefs, z):
    """coefs[0] + z*(coefs[1] + z*(...)) by Horner's rule (the first product made as the
    array, rather than a filled array multiplied: the same values, one pass fewer)."""
    acc = z * coefs[-1]
    acc += coefs[-2]
    for c in coefs[-3::-1]:
        acc *= z
        acc += c
    return acc


def _ratio(p, q, z):
    out = _poly(p, z)
    out /= _poly(q, z)
    return out


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of a float64 array (a new float64 array).

    Each element takes the branch of its magnitude; a branch that holds every element is
    computed on the whole array, and the two rational approximations of the tail each on the
    elements they serve (numpy calls, not arithmetic, are most of the time on small arrays)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:  # numpy's arithmetic on 0-d arrays gives scalars
        return erf(x.reshape(1)).reshape(())
    a = np.abs(x)
    with np.errstate(all="ignore"):
        small = a < 0.84375
        if small.all():
            z = x * x
            out = x * _ratio(_PP, _QQ, z)
            out += x
            return out
        out = np.where(a >= 6.0, np.copysign(1.0, x), np.nan)  # NaN stays NaN
        if small.any():
            xs = x[small]
            z = xs * xs
            part = xs * _ratio(_PP, _QQ, z)
            part += xs
            out[small] = part
        mid = (a >= 0.84375) & (a < 1.25)
        if mid.any():
            s = a[mid] - 1.0
            out[mid] = np.copysign(_ERX + _ratio(_PA, _QA, s), x[mid])
        tail = (a >= 1.25) & (a < 6.0)
        if tail.any():
            at = a[tail]
            s = 1.0 / (at * at)
            near = at < 1.0 / 0.35
            if near.all():
                r = _ratio(_RA, _SA, s)
            elif not near.any():
                r = _ratio(_RB, _SB, s)
            else:
                r = np.empty_like(at)
                r[near] = _ratio(_RA, _SA, s[near])
                far = ~near
                r[far] = _ratio(_RB, _SB, s[far])
            # z: |x| with the low 32 bits of its significand cleared, so that z*z is exact.
            z = (at.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
            e = np.exp(-z * z - 0.5625) * np.exp((z - at) * (z + at) + r)
            out[tail] = np.copysign(1.0 - e / at, x[tail])
    return out


_SQRT1_2 = 1.0 / math.sqrt(2.0)

LOG2E = 1.0 / math.log(2.0)


def exp_scaled(x: np.ndarray, c, out: np.ndarray) -> np.ndarray:
    """``exp(c * x)`` into ``out``. In float32 as ``exp2((c log2 e) x)``: numpy's f32 exp2 runs
    in half the time of its exp (0.23 against 0.49 ns an element here), and the product costs
    the pass the scaling costs anyway. The argument's rounding makes the relative error grow
    with it, about |c x| 6e-8: for the functions built on it here (Swish, Gelu's tail, a
    softmax's weights), a large argument is a value that vanishes next to 1 or to the row's
    largest term, inside the transcendental family's tolerance (numerics.md); Exp and Sigmoid
    keep numpy's exp. Other types: ``exp(c * x)`` as written."""
    if x.dtype == np.float32:
        np.multiply(x, np.float32(c * LOG2E), out=out)
        return np.exp2(out, out=out)
    np.multiply(x, c, out=out)
    return np.exp(out, out=out)


# f32 Gelu goes through the array in blocks of this many elements, so that its passes stay in
# the cache
GELU_BLOCK = 1 << 14
# Abramowitz and Stegun's formula 7.1.26 (Handbook of Mathematical Functions, 1964): for a >= 0,
# erfc(a) ~ t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-a^2) with t = 1 / (1 + p a), within
# 1.5e-7 of erf. OpenVINO's CPU plugin computes Gelu's exact form by it (oneDNN's gelu_erf).
# Here a = |x| / sqrt 2 is never formed: p carries the 1 / sqrt 2, and the coefficients the
# 1/2 of Q = erfc(a) / 2 (halving is exact).
_AS_P = np.float32(0.3275911 * _SQRT1_2)
_AS_HALF_A = tuple(np.float32(0.5 * c) for c in (0.254829592, -0.284496736, 1.421413741,
                                                 -1.453152027, 1.061405429))
# |x| is held at this much in the product |x| Q (Q is 0 in f32 long before): inf * 0 is NaN
_AS_CAP = np.float32(1e4)
def gelu_erf(x, o):
    """0.5 * x * (1 + erf(x / sqrt(2))). In float32 as x Phi(x) = max(x, 0) - |x| Q(|x|), with
    Q = erfc(|x| / sqrt 2) / 2 by Abramowitz and Stegun's 7.1.26 (``_AS_HALF_A``), as
    OpenVINO's CPU plugin computes erfc: no cancellation on either side of 0, no mask, about 20
    passes over a cache-sized block at a time. Within 3.3e-7 of the exact value absolutely,
    inside the transcendental family's tolerance (tests/kernels/test_gelu_f32.py sweeps it).
    In float64 (and precise mode): fdlibm's erf above, within 1 ulp."""
    if x.dtype != np.float32:
        _gelu_erf64(x, o)
        return
    if not o.flags.c_contiguous:  # (kernels' outputs are; a view handed in is written whole)
        whole = np.empty(o.shape, np.float32)
        gelu_erf(x, whole)
        o[...] = whole
        return
    flat_x, flat_o = np.ascontiguousarray(x).reshape(-1), o.reshape(-1)
    size = min(flat_x.size, GELU_BLOCK)
    a, t, q = (np.empty(size, np.float32) for _ in range(3))
    zeros, cap = filled(0.0, size), filled(_AS_CAP, size)  # (max against arrays: see filled)
    one, minus_half_log2e = np.float32(1), np.float32(-0.5 * LOG2E)
    c1, c2, c3, c4, c5 = _AS_HALF_A
    for start in range(0, flat_x.size, GELU_BLOCK):
        v = flat_x[start:start + GELU_BLOCK]
        n = v.size
        if n == size:
            av, tv, qv, zv, cv = a, t, q, zeros, cap
        else:  # the last, shorter block
            av, tv, qv, zv, cv = a[:n], t[:n], q[:n], zeros[:n], cap[:n]
        np.abs(v, out=av)
        np.multiply(av, _AS_P, out=tv)
        tv += one
        np.divide(one, tv, out=tv)  # (numpy's divide loop is faster than its reciprocal)
        np.multiply(tv, c5, out=qv)
        for c in (c4, c3, c2, c1):
            qv += c
            qv *= tv
        np.multiply(v, minus_half_log2e, out=tv)  # exp(-x^2 / 2) = exp(-a^2), by exp2:
        tv *= v  # see exp_scaled
        np.exp2(tv, out=tv)
        qv *= tv  # Q
        np.minimum(av, cv, out=av)
        qv *= av
        ov = flat_o[start:start + n]
        np.maximum(zv, v, out=ov)  # (zeros first: max(0, -0.0) is -0.0, Gelu's sign)
        ov -= qv


def _gelu_erf64(x, o):
    w = x.astype(np.float64)
    e = erf(w * _SQRT1_2)
    e += 1
    e *= w
    e *= 0.5
    o[...] = e


_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def gelu_tanh(x, o):
    """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."""
    t = np.multiply(x, x)
    t *= x
    t *= 0.044715
    t += x
    t *= _SQRT_2_PI
    np.tanh(t, out=t)
    t += 1
    t *= x
    np.multiply(t, 0.5, out=o)
