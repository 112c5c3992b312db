"""RandomUniform-8: the generators' published answers, properties of the streams, the spec's
examples, OpenVINO's reference (``Node.evaluate``) bit for bit on every output type and both
alignments, OpenVINO's CPU plugin where it computes as the reference does, and bad inputs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.api import validate_file
from irexec.errors import IRError
from irexec.kernels import philox
from tests.ops.build import Const, run_op
from tests.ops.shapeops_oracle import openvino

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": BF16,
          "f64": np.dtype(np.float64), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64)}


def bits(a) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}")


def random_uniform(shape, lo, hi, output_type, **attrs):
    (out,), _ = run_op("RandomUniform", Const(np.array(shape, np.int64)),
                       Const(np.array(lo, DTYPES[output_type])),
                       Const(np.array(hi, DTYPES[output_type])), version="opset8",
                       output_type=output_type, **attrs)
    return out


# --- the generators' published answers ----------------------------------------------------------

# Random123's known-answer tests for Philox4x32-10 (kat_vectors): counter words c0..c3, key
# words k0, k1, and the four output words. irexec's counter is (n, counter) = (c1:c0, c3:c2).
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr, key, expected", KAT)
def test_philox_known_answers(ctr, key, expected):
    n = ctr[1] << 32 | ctr[0]
    counter = ctr[3] << 32 | ctr[2]
    got = philox.philox_blocks(key[1] << 32 | key[0], n, counter, 1)
    assert got.tolist() == [list(expected)]


def test_mt19937_known_answers():
    # The C++ standard's check of std::mt19937 (default seed 5489): its 10000th output.
    words = philox.mt19937_words(5489, 10000)
    assert words[0] == 3499211612 and words[-1] == 4123659995


# --- properties of the streams --------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(key=st.integers(0, 2**64 - 1), n=st.integers(0, 2**64 - 1),
       counter=st.integers(0, 2**64 - 1), first=st.integers(0, 40), second=st.integers(0, 40))
def test_philox_counter_continuity(key, n, counter, first, second):
    """Blocks n..n+a+b in one call are blocks n..n+a and then n+a.. in two: n carries into the
    counter when it passes 2**64."""
    whole = philox.philox_blocks(key, n, counter, first + second)
    head = philox.philox_blocks(key, n, counter, first)
    carry = (n + first) >> 64
    tail = philox.philox_blocks(key, (n + first) % 2**64, (counter + carry) % 2**64, second)
    np.testing.assert_array_equal(whole, np.concatenate([head, tail]))


def test_philox_wraps_n_into_the_counter():
    last = philox.philox_blocks(7, 2**64 - 1, 5, 2)
    np.testing.assert_array_equal(last[1], philox.philox_blocks(7, 0, 6, 1)[0])


def test_philox_blocks_do_not_depend_on_the_pass_size():
    """Blocks are computed in passes of philox._CHUNK: a block is the same whatever pass holds
    it."""
    size = philox._CHUNK
    many = philox.philox_blocks(3, 10, 4, 2 * size + 5)
    for i in (0, size - 1, size, 2 * size + 4):
        np.testing.assert_array_equal(many[i], philox.philox_blocks(3, 10 + i, 4, 1)[0])


def test_a_compiled_model_continues_its_stream():
    """Each call moves n on by 256 per value (OpenVINO's CPU plugin, TensorFlow)."""
    out = random_uniform([5], 0, 1, "f32", global_seed=150, op_seed=10)
    assert bits(out).tolist() == bits(philox.uniform(5, "f32", np.float32(0), np.float32(1), 150,
                                                     10, "tensorflow")).tolist()
    from irexec.builder import ModelBuilder
    b = ModelBuilder()
    o = b.op("RandomUniform", b.constant(np.array([5], np.int64)),
             b.constant(np.float32(0)), b.constant(np.float32(1)), version="opset8",
             output_type="f32", global_seed=150, op_seed=10)
    b.result(o, "r")
    model = b.build()
    compiled = irexec.compile_model(model)
    calls = [compiled({})[0] for _ in range(3)]
    for k, got in enumerate(calls):
        want = philox.uniform(5, "f32", np.float32(0), np.float32(1), 150, 10, "tensorflow",
                              (k * 5 * 256, 0))
        np.testing.assert_array_equal(got, want)
    # a request of the same compiled model goes on from there; a new compile starts afresh
    np.testing.assert_array_equal(compiled.create_infer_request().infer({})[0],
                                  philox.uniform(5, "f32", np.float32(0), np.float32(1), 150, 10,
                                                 "tensorflow", (15 * 256, 0)))
    np.testing.assert_array_equal(irexec.compile_model(model)({})[0], calls[0])


def test_pytorch_stream_starts_afresh_every_call():
    from irexec.builder import ModelBuilder
    b = ModelBuilder()
    o = b.op("RandomUniform", b.constant(np.array([7], np.int64)),
             b.constant(np.int32(0)), b.constant(np.int32(1000)), version="opset8",
             output_type="i32", global_seed=3, alignment="pytorch")
    b.result(o, "r")
    compiled = irexec.compile_model(b.build())
    first = compiled({})[0]
    np.testing.assert_array_equal(compiled({})[0], first)
    # MT19937 from seed 3, each word mod 1000
    np.testing.assert_array_equal(first, np.random.RandomState(3).randint(0, 2**32, 7,
                                                                           np.uint64) % 1000)


@settings(max_examples=50, deadline=None)
@given(kind=st.sampled_from(sorted(DTYPES)), alignment=st.sampled_from(["tensorflow", "pytorch"]),
       lo=st.integers(-1000, 1000), width=st.integers(1, 2000), seed=st.integers(1, 2**64 - 1),
       size=st.integers(0, 40))
def test_values_lie_in_min_max(kind, alignment, lo, width, seed, size):
    dtype = DTYPES[kind]
    mn, mx = np.array(lo, dtype), np.array(lo + width, dtype)
    if not mn < mx:  # f16/bf16 may round both ends together
        return
    out = random_uniform([size], mn, mx, kind, global_seed=seed, op_seed=seed // 3,
                         alignment=alignment)
    assert out.dtype == dtype and out.shape == (size,)
    assert (out >= mn).all()
    if dtype.kind == "i":
        assert (out < mx).all()
    else:  # rounding of x * (max - min) + min may reach max, never pass it
        assert (out <= mx).all()


def test_zero_seeds_draw_new_numbers_each_call():
    a = random_uniform([64], 0, 1, "f32")
    b = random_uniform([64], 0, 1, "f32")
    assert not np.array_equal(a, b) and ((0 <= a) & (a < 1)).all()


def test_empty_and_scalar_shapes():
    assert random_uniform([0, 3], 0, 1, "f32", global_seed=1).shape == (0, 3)
    scalar = random_uniform([], 0, 1, "f32", global_seed=150, op_seed=10)
    assert scalar.shape == () and scalar == np.float32(0.7011236)


# --- the specification's examples -------------------------------------------------------------------

def test_spec_examples():
    np.testing.assert_allclose(
        random_uniform([3, 3], 0, 1, "f32", global_seed=150, op_seed=10),
        [[0.7011236, 0.30539632, 0.93931055], [0.9456035, 0.11694777, 0.50770056],
         [0.5197197, 0.22727466, 0.991374]], rtol=0, atol=5e-8)
    np.testing.assert_allclose(
        random_uniform([2, 2], 2, 10, "f64", global_seed=80, op_seed=100),
        [[5.65927959, 4.23122376], [2.67008206, 2.36423758]], rtol=0, atol=5e-9)
    np.testing.assert_array_equal(
        random_uniform([2, 3], 50, 100, "i32", global_seed=80, op_seed=100),
        [[65, 70, 56], [59, 82, 92]])


# --- OpenVINO: its reference, and its CPU plugin -----------------------------------------------------

CASES = [("f32", 0, 1), ("f32", -3.5, 7.25), ("f16", 0, 1), ("f16", -3.5, 7.25),
         ("f16", -60000, 60000), ("bf16", 0, 1), ("bf16", -3.5, 7.25), ("bf16", 1e30, 3e38),
         ("f64", 0, 1), ("f64", 2, 10), ("i32", 50, 100), ("i32", -2**31, 2**31 - 1),
         ("i64", 50, 100), ("i64", -5, 2**40), ("i64", 3, 2**33), ("i64", -2**63, 2**63 - 1)]
SEEDS = [(150, 10), (1, 0), (0, 5), (2**40 + 7, 2**35 + 3), (2**63 - 1, 2**63 - 2)]


def _ov_tensor(ov, array):
    if array.dtype == BF16:
        t = ov.Tensor(ov.Type.bf16, ov.Shape(list(array.shape)))
        t.data.view(np.uint16)[...] = array.view(np.uint16)
        return t
    return ov.Tensor(np.ascontiguousarray(array))


def _from_ov(ov, tensor, kind):
    data = np.array(tensor.data)
    return data.view(np.uint16).view(BF16) if kind == "bf16" else data


def test_openvino_reference_bit_for_bit():
    """OpenVINO's reference implementation (the op's ``evaluate``), every output type, both
    alignments, several seeds and sizes (1, 7: part of a block; 1000), two calls of the same
    node (its state moves the TensorFlow stream on)."""
    ov = openvino()
    import openvino.opset8 as o
    ovt = {"f32": ov.Type.f32, "f16": ov.Type.f16, "bf16": ov.Type.bf16, "f64": ov.Type.f64,
           "i32": ov.Type.i32, "i64": ov.Type.i64}
    for alignment in ("tensorflow", "pytorch"):
        for kind, lo, hi in CASES:
            dtype = DTYPES[kind]
            mn, mx = np.array(lo, dtype), np.array(hi, dtype)
            for gs, osd in SEEDS:
                for size in (1, 7, 1000):
                    node = o.random_uniform(np.array([size], np.int64),
                                            o.parameter([], ovt[kind]), o.parameter([], ovt[kind]),
                                            kind, gs, osd, alignment)
                    out = ov.Tensor(ovt[kind], ov.Shape([size]))
                    assert node.evaluate([out], [ov.Tensor(np.array([size], np.int64)),
                                                 _ov_tensor(ov, mn), _ov_tensor(ov, mx)])
                    want = _from_ov(ov, out, kind)
                    got = philox.uniform(size, kind, mn, mx, gs, osd, alignment)
                    assert got.dtype == dtype
                    assert bits(got).tolist() == bits(want).tolist(), (alignment, kind, lo, hi,
                                                                       gs, osd, size)
                    if size == 7 and gs == 150:
                        # the reference's state after a call: 256 per block of words
                        assert node.evaluate([out], [ov.Tensor(np.array([size], np.int64)),
                                                     _ov_tensor(ov, mn), _ov_tensor(ov, mx)])
                        per_block = 2 if kind in ("f64", "i64") else 4
                        state = ((-(-size // per_block)) * 256, 0) \
                            if alignment == "tensorflow" else (0, 0)
                        again = philox.uniform(size, kind, mn, mx, gs, osd, alignment, state)
                        assert bits(again).tolist() == bits(_from_ov(ov, out, kind)).tolist()


def test_openvino_cpu_plugin_from_saved_ir(tmp_path):
    """Built with OpenVINO's opset API, saved as IR, read by irexec: three calls of one compiled
    model agree with three calls of OpenVINO's CPU plugin wherever the plugin computes as the
    reference does (f32 in [0, 1), integers in ranges below 2**31: docs/compatibility.md)."""
    ov = openvino()
    import openvino.opset8 as o
    nodes = []
    for alignment in ("tensorflow", "pytorch"):
        for shape in ([9], [3, 4], [1000]):
            nodes.append(o.random_uniform(np.array(shape, np.int64), np.float32(0),
                                          np.float32(1), "f32", 150, 10, alignment))
            nodes.append(o.random_uniform(np.array(shape, np.int32), np.int32(-50),
                                          np.int32(100), "i32", 80, 100, alignment))
        nodes.append(o.random_uniform(np.array([11], np.int64), np.int64(0), np.int64(1000),
                                      "i64", 5, 0, "pytorch"))
    model = ov.Model([n.output(0) for n in nodes], [], "random")
    path = tmp_path / "random.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    ours = irexec.compile_model(irexec.read_model(path))
    for _ in range(3):
        theirs = compiled({})
        got = ours({})
        for i in range(len(nodes)):
            assert bits(got[i]).tolist() == bits(theirs[i]).tolist(), i


# --- bad inputs ---------------------------------------------------------------------------------

def _code(fn) -> str:
    with pytest.raises(IRError) as e:
        fn()
    return e.value.code


def test_bad_inputs_have_codes():
    assert _code(lambda: random_uniform([2], 1, 1, "f32", global_seed=1)) == "IR387"
    assert _code(lambda: random_uniform([2], 5, 2, "i64", global_seed=1)) == "IR387"
    assert _code(lambda: random_uniform([2, -1], 0, 1, "f32", global_seed=1)) == "IR327"
    assert _code(lambda: run_op("RandomUniform", Const(np.array([2], np.int64)),
                                Const(np.float32(0)), Const(np.float32(1)), version="opset8",
                                output_type="f16", global_seed=1)) == "IR304"
    assert _code(lambda: run_op("RandomUniform", Const(np.array([2], np.int64)),
                                Const(np.uint8(0)), Const(np.uint8(1)), version="opset8",
                                output_type="u8", global_seed=1)) == "IR302"
    assert _code(lambda: run_op("RandomUniform", Const(np.array([2], np.int64)),
                                Const(np.zeros(2, np.float32)), Const(np.float32(1)),
                                version="opset8", output_type="f32", global_seed=1)) == "IR321"
    assert _code(lambda: run_op("RandomUniform", Const(np.array([2], np.float32)),
                                Const(np.float32(0)), Const(np.float32(1)), version="opset8",
                                output_type="f32", global_seed=1)) == "IR304"
    assert _code(lambda: random_uniform([2], 0, 1, "f32", global_seed=2**64)) == "IR302"


def test_min_and_max_arriving_at_run_time_are_checked():
    assert _code(lambda: run_op("RandomUniform", Const(np.array([2], np.int64)),
                                np.int32(7), np.int32(7), version="opset8", output_type="i32",
                                global_seed=1)) == "IR387"
    assert _code(lambda: run_op("RandomUniform", np.array([2, -3], np.int64),
                                Const(np.float32(0)), Const(np.float32(1)), version="opset8",
                                output_type="f32", global_seed=1)) == "IR327"
    (out,), model = run_op("RandomUniform", np.array([2, 3], np.int32), Const(np.float32(0)),
                           Const(np.float32(1)), version="opset8", output_type="f32",
                           global_seed=1)
    assert out.shape == (2, 3) and str(model.outputs[0].partial_shape) == "[?,?]"


def test_zero_seeds_warn():
    from tests.validate.fixture_files import xml_path
    assert [d.code for d in validate_file(xml_path("IR388"))] == ["IR388"]


def test_written_back_ir_runs_the_same_in_openvino(tmp_path):
    """irexec writes the layers (seeds, alignment, Multinomial's flags) so that OpenVINO reads
    them as meant: RandomUniform's values agree with OpenVINO's CPU plugin, Multinomial's
    shape and type do (its samples are drawn otherwise there: docs/compatibility.md)."""
    ov = openvino()
    from irexec.builder import ModelBuilder
    b = ModelBuilder()
    for alignment in ("tensorflow", "pytorch"):
        o = b.op("RandomUniform", b.constant(np.array([3, 5], np.int32)),
                 b.constant(np.float32(0)), b.constant(np.float32(1)), version="opset8",
                 output_type="f32", global_seed=2**40 + 1, op_seed=9, alignment=alignment)
        b.result(o, f"ru_{alignment}")
    m = b.op("Multinomial", b.constant(np.ones((2, 4), np.float16)), b.constant(np.int64(3)),
             version="opset13", convert_type="i32", with_replacement=False, log_probs=True,
             global_seed=5, op_seed=6)
    b.result(m, "mn")
    path = tmp_path / "written.xml"
    irexec.save_model(b.build(), path)
    model = ov.Core().read_model(str(path))
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    theirs = compiled({})
    ours = irexec.compile_model(irexec.read_model(path))({})
    for i in range(2):
        assert bits(ours[i]).tolist() == bits(theirs[i]).tolist()
    assert ours[2].shape == theirs[2].shape == (2, 3) and ours[2].dtype == theirs[2].dtype
    assert sorted(ours[2][0].tolist()) == sorted(set(ours[2][0].tolist()))
