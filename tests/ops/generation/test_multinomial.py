"""Multinomial-13: OpenVINO's reference algorithm written out element by element (its samples are
RandomUniform's, checked bit for bit against OpenVINO in test_random_uniform.py), properties of
the draws, the specification's examples, and bad inputs."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.errors import IRError
from irexec.kernels import philox
from tests.ops.build import Const, run_op

BF16 = np.dtype(ml_dtypes.bfloat16)
KIND = {np.dtype(np.float16): "f16", BF16: "bf16", np.dtype(np.float32): "f32",
        np.dtype(np.float64): "f64"}


def rounded(value: float, dtype) -> float:
    """A float (computed in f32, or f64 for f64) rounded as OpenVINO rounds to ``dtype``."""
    if dtype == BF16:
        return float(philox.to_bf16(np.array([value], np.float32))[0])
    if dtype == np.float64:
        return value
    return float(np.array(value, np.float32).astype(dtype))


def op(a: float, b: float, fn, dtype) -> float:
    """a fn b as OpenVINO's reference computes it in ``dtype`` (f16/bf16 through f32)."""
    with np.errstate(all="ignore"):
        if dtype == np.float64:
            return float(fn(np.float64(a), np.float64(b)))
        return rounded(float(fn(np.float32(a), np.float32(b))), dtype)


def reference(probs: np.ndarray, samples: int, with_replacement: bool, log_probs: bool,
              global_seed: int, op_seed: int) -> list[list[int]]:
    """multinomial.hpp, one element at a time."""
    dtype = probs.dtype
    batch, classes = probs.shape
    u = philox.uniform(batch * samples, KIND[dtype], np.zeros((), dtype), np.ones((), dtype),
                       global_seed, op_seed, "tensorflow").astype(np.float64)
    out = []
    for i in range(batch):
        row = [float(v) for v in probs[i]]
        if log_probs:
            row = [rounded(float(np.float32(math.exp(v))) if dtype != np.float64
                           else math.exp(v), dtype) for v in row]
        cdf, acc = [], 0.0
        for k, v in enumerate(row):
            acc = v if k == 0 else op(acc, v, np.add, dtype)
            cdf.append(acc)
        cdf = [op(c, cdf[-1], np.divide, dtype) for c in cdf]
        picks = []
        for j in range(samples):
            s = u[i * samples + j]
            chosen = next((k for k in range(classes) if s <= cdf[k]), None)
            picks.append(0 if chosen is None else chosen)
            if chosen is None or with_replacement:
                continue
            p = op(cdf[chosen], cdf[chosen - 1], np.subtract, dtype) if chosen else cdf[0]
            divisor = op(1.0, p, np.subtract, dtype)
            for k in range(classes):
                if k >= chosen:
                    cdf[k] = op(cdf[k], p, np.subtract, dtype)
                cdf[k] = op(cdf[k], divisor, np.divide, dtype)
        out.append(picks)
    return out


def multinomial(probs, samples, with_replacement, log_probs=False, seed=(150, 10),
                convert_type="i64", const=True):
    (out,), model = run_op("Multinomial", Const(probs) if const else probs,
                           Const(np.array(samples, np.int64)), version="opset13",
                           convert_type=convert_type, with_replacement=with_replacement,
                           log_probs=log_probs, global_seed=seed[0], op_seed=seed[1])
    return out, model


@settings(max_examples=50, deadline=None)
@given(dtype=st.sampled_from(sorted(KIND, key=str)), batch=st.integers(1, 4),
       classes=st.integers(1, 7), extra=st.integers(0, 6), replace=st.booleans(),
       log_probs=st.booleans(), seed=st.tuples(st.integers(1, 2**63), st.integers(0, 2**63)),
       data=st.data())
def test_matches_the_reference_written_out(dtype, batch, classes, extra, replace, log_probs, seed,
                                           data):
    if log_probs:
        values = data.draw(st.lists(st.floats(-4, 4), min_size=batch * classes,
                                    max_size=batch * classes))
    else:
        values = data.draw(st.lists(st.one_of(st.just(0.0), st.floats(0.01, 5)),
                                    min_size=batch * classes, max_size=batch * classes))
    probs = np.array(values, np.float64).reshape(batch, classes).astype(dtype)
    if not log_probs:
        probs[:, 0] = np.asarray(1, dtype)  # every row some weight
    samples = classes + extra if replace else data.draw(st.integers(0, classes))
    out, _ = multinomial(probs, samples, replace, log_probs, seed)
    assert out.tolist() == reference(probs, samples, replace, log_probs, *seed)


def test_without_replacement_never_repeats_and_skips_empty_classes():
    probs = np.array([[0.0, 2.0, 0.0, 1.0, 3.0, 0.0, 0.5]], np.float32)
    for seed in range(1, 30):
        out, _ = multinomial(probs, 4, False, seed=(seed, 7))
        assert sorted(out[0].tolist()) == [1, 3, 4, 6]
        out, _ = multinomial(probs, 50, True, seed=(seed, 7))
        assert set(out[0].tolist()) <= {1, 3, 4, 6}


def test_frequencies_follow_the_probabilities():
    probs = np.array([[0.1, 0.5, 0.4], [0.7, 0.2, 0.1]], np.float32)
    out, _ = multinomial(probs, 20000, True, seed=(3, 4))
    for row, p in zip(out, probs):
        np.testing.assert_allclose(np.bincount(row, minlength=3) / 20000, p, atol=0.015)
    logs, _ = multinomial(np.log(probs), 20000, True, log_probs=True, seed=(3, 4))
    assert (logs != out).mean() < 0.01  # exp(log p) is p up to rounding


def test_spec_examples_shapes_and_types():
    out, model = multinomial(np.array([[0.1, 0.5, 0.4]], np.float32), 5, True,
                             convert_type="i32")
    assert out.dtype == np.int32 and out.shape == (1, 5)
    assert str(model.outputs[0].partial_shape) == "[1,5]"
    out, _ = multinomial(np.array([[-1, 1, 2], [50, 1, 21]], np.float32), 10, True,
                         log_probs=True)
    assert out.shape == (2, 10) and (out[1] == 0).all()  # e**50 dwarfs the rest
    out, _ = multinomial(np.array([[0.1, 0.5, 0.4]], np.float32), 2, False)
    assert len(set(out[0].tolist())) == 2


def test_same_result_every_call_and_zero_seeds_vary():
    probs = np.full((1, 1000), 1.0, np.float32)
    a, _ = multinomial(probs, 20, True)
    b, _ = multinomial(probs, 20, True)
    np.testing.assert_array_equal(a, b)
    c, _ = multinomial(probs, 20, True, seed=(0, 0))
    d, _ = multinomial(probs, 20, True, seed=(0, 0))
    assert not np.array_equal(c, d)


def test_dynamic_inputs():
    probs = np.array([[1.0, 2.0], [3.0, 0.0]], np.float32)
    (out,), model = run_op("Multinomial", probs, np.array([3], np.int32), version="opset13",
                           shapes={0: [-1, 2]}, convert_type="i64", with_replacement=True,
                           log_probs=False, global_seed=1, op_seed=2)
    assert out.shape == (2, 3) and str(model.outputs[0].partial_shape) == "[?,?]"
    assert out.tolist() == reference(probs, 3, True, False, 1, 2)


def _code(fn) -> str:
    with pytest.raises(IRError) as e:
        fn()
    return e.value.code


def test_bad_inputs_have_codes():
    probs = np.ones((2, 3), np.float32)
    assert _code(lambda: multinomial(probs, 4, False)) == "IR389"
    assert _code(lambda: multinomial(probs, -1, True)) == "IR389"
    assert _code(lambda: multinomial(probs, 4, False, const=False)) == "IR389"
    assert _code(lambda: multinomial(probs, 2, True, convert_type="f32")) == "IR302"
    assert _code(lambda: multinomial(np.ones((2, 3), np.int32), 2, True)) == "IR304"
    assert _code(lambda: multinomial(np.ones(3, np.float32), 2, True)) == "IR305"
    assert _code(lambda: run_op("Multinomial", Const(probs), Const(np.array([1, 2], np.int64)),
                                version="opset13", convert_type="i64", with_replacement=True,
                                log_probs=False, global_seed=1)) == "IR321"
    assert _code(lambda: run_op("Multinomial", probs, np.array(-2, np.int64), version="opset13",
                                convert_type="i64", with_replacement=True, log_probs=False,
                                global_seed=1)) == "IR389"


def test_precise_mode_draws_the_same():
    """Precise mode computes float layers in float64; a generator's numbers are its own, so
    RandomUniform and Multinomial run as in the default mode."""
    import irexec
    from irexec.builder import ModelBuilder
    b = ModelBuilder()
    probs = b.parameter("probs", "f16", [2, 6])
    m = b.op("Multinomial", probs, b.constant(np.int64(4)), version="opset13",
             convert_type="i64", with_replacement=False, log_probs=False, global_seed=5,
             op_seed=6)
    b.result(m, "mn")
    r = b.op("RandomUniform", b.constant(np.array([5], np.int64)), b.constant(np.float16(-1)),
             b.constant(np.float16(3)), version="opset8", output_type="f16", global_seed=5)
    b.result(r, "ru")
    model = b.build()
    feed = {"probs": np.random.default_rng(0).random((2, 6)).astype(np.float16)}
    default = irexec.compile_model(model)(feed)
    precise = irexec.compile_model(model, config={"precision": "f64"})(feed)
    for i in range(2):
        np.testing.assert_array_equal(default[i], precise[i])


@pytest.mark.parametrize("type_name", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("convert", [False, True])
def test_generated_probabilities_are_non_negative(type_name, convert):
    """`irexec run` made probs in [-10, 10): negative probabilities, which the specification
    does not allow. Made now from the input's weights domain, in [0, 1), whatever the seed,
    through a Convert too; and they are the input's own shape (a dynamic batch gets a size)."""
    import irexec
    from irexec.builder import ModelBuilder
    from irexec.runtime.inputs import make_inputs

    b = ModelBuilder()
    probs = b.parameter("probs", "f32" if convert else type_name, [-1, 6])
    if convert:
        probs = b.op("Convert", probs, destination_type=type_name)
    out = b.op("Multinomial", probs, b.constant(np.int64(4)), version="opset13",
               convert_type="i64", with_replacement=True, log_probs=False, global_seed=3,
               op_seed=5)
    b.result(out, "drawn")
    model = b.build()
    for seed in range(20):
        made = make_inputs(model, {}, seed)["probs"]
        values = made.astype(np.float64)
        assert values.ndim == 2 and values.shape[1] == 6 and values.shape[0] >= 1
        assert (values >= 0).all() and (values < 1).all() and values.max() > 0
    drawn = irexec.compile_model(model)(make_inputs(model, {}, 0))[0]
    assert ((drawn >= 0) & (drawn < 6)).all()
