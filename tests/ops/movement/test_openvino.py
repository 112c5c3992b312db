"""Conformance: the data-movement ops built with OpenVINO's own Python opset API, saved by
OpenVINO, read and run by irexec and by OpenVINO's CPU plugin, compared bit for bit.

Each test puts many random cases into one model (one Parameter per case and element type), so
OpenVINO compiles once per op. The element types are those the CPU plugin moves exactly
(docs/compatibility.md lists where it does not): i64 and u64 values stay within 32 bits, f64
values within f32, f16 NaNs are quiet, the f8 types hold no -0.0 and f8e5m2 NaNs only the
plugin's own pattern; u1, u3 and u6 it refuses, u2, nf4 and f4e2m1 it crashes on or corrupts in
most of these ops, and f8e8m0 it refuses to compile in several layouts, so they are left to the
numpy references of the other tests. Strings go where the CPU plugin moves them.
"""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.cli.compare import from_openvino_tensor, openvino_tensor
from tests.conformance.oracle import OV_CONFIG
from tests.ops.support import PLAIN_TYPE_NAMES, assert_same_bits, dtype_of, random_values

ov = pytest.importorskip("openvino")
import openvino.opset1 as o1  # noqa: E402
import openvino.opset3 as o3  # noqa: E402
import openvino.opset4 as o4  # noqa: E402
import openvino.opset5 as o5  # noqa: E402
import openvino.opset7 as o7  # noqa: E402
import openvino.opset12 as o12  # noqa: E402
import openvino.opset15 as o15  # noqa: E402
import openvino.opset16 as o16  # noqa: E402

TYPES = PLAIN_TYPE_NAMES + ["i4", "u4", "f8e4m3", "f8e5m2"]


def safe(type_name: str, shape, rng) -> np.ndarray:
    """Random values the CPU plugin moves without changing them."""
    dtype = dtype_of(type_name)
    if type_name in ("i64", "u64"):
        low = 0 if type_name == "u64" else -(2**31)
        return rng.integers(low, 2**31, size=shape).astype(dtype)
    if type_name == "f64":
        values = rng.standard_normal(shape) * 1e3
        return values.astype(np.float32).astype(np.float64)
    values = random_values(type_name, shape, rng)
    if type_name == "f16":
        raw = values.view(np.uint16).copy()
        raw[np.isnan(values)] |= 0x0200  # quiet NaNs (the plugin quiets signalling ones)
        values = raw.view(np.float16)
    if type_name in ("f8e4m3", "f8e5m2"):
        raw = values.view(np.uint8).copy()
        raw[raw == 0x80] = 0  # -0.0 becomes +0.0 in some of the plugin's kernels
        if type_name == "f8e5m2":  # and NaN payloads become 0x7f in its Scatter kernels
            raw[np.isnan(values.astype(np.float32))] = 0x7F
        values = raw.view(dtype)
    return values


def const(values, dtype=np.int64):
    return o16.constant(np.array(values, dtype=dtype))


class Model:
    """Cases of one op in one OpenVINO model."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.params, self.feeds, self.outputs = [], [], []

    def param(self, type_name: str, shape, values=None):
        p = o16.parameter(list(shape), getattr(ov.Type, type_name))
        self.params.append(p)
        self.feeds.append(safe(type_name, shape, self.rng) if values is None else values)
        return p

    def out(self, node):
        for i in range(node.get_output_size()):
            self.outputs.append(node.output(i))

    def shape(self, rank: int, low: int = 1, high: int = 4) -> list[int]:
        return [int(d) for d in self.rng.integers(low, high + 1, size=rank)]

    def compare(self, tmp_path, name: str = "model"):
        path = tmp_path / f"{name}.xml"
        ov.save_model(ov.Model(self.outputs, self.params), str(path), compress_to_fp16=False)
        ours = list(irexec.compile_model(irexec.read_model(path))(self.feeds).values())
        core = ov.Core()
        compiled = core.compile_model(core.read_model(str(path)), "CPU", OV_CONFIG)
        request = compiled.create_infer_request()
        request.infer({i: openvino_tensor(ov, v) for i, v in enumerate(self.feeds)})
        assert len(ours) == len(compiled.outputs)
        for i, a in enumerate(ours):
            b = from_openvino_tensor(ov, request.get_output_tensor(i))
            if a.dtype.name == "bfloat16" and b.dtype == a.dtype:
                # On CPUs with AVX512_BF16 the plugin's scatters may rewrite a bf16 NaN's
                # payload (seen on 2026.4.1); a NaN stays a NaN, every other value keeps its
                # bits. irexec's own bit-for-bit moves are held in tests/ops/movement/.
                nan = np.isnan(a.astype(np.float32))
                assert np.array_equal(nan, np.isnan(b.astype(np.float32)))
                a, b = a[~nan], b[~nan]
            assert_same_bits(a, b)
        return ours


@pytest.mark.parametrize("seed", range(2))
def test_reshape_squeeze_unsqueeze(tmp_path, seed):
    m = Model(100 + seed)
    for t in TYPES + ["string"]:
        shape = m.shape(3)
        x = m.param(t, shape)
        m.out(o16.reshape(x, const([0, -1]), True))
        m.out(o16.reshape(x, const([int(np.prod(shape))]), False))
        y = m.param(t, [1] + shape[:1] + [1])
        m.out(o1.squeeze(y, const([0, -1])))
        m.out(o15.squeeze(y, const([2]), False))
        m.out(o16.squeeze(y))
        m.out(o16.unsqueeze(x, const([0, -1])))
    m.compare(tmp_path)


def test_transpose(tmp_path):
    m = Model(200)
    for t in TYPES + ["string"]:
        for rank in (2, 4):
            x = m.param(t, m.shape(rank))
            m.out(o16.transpose(x, const(m.rng.permutation(rank))))
        m.out(o16.transpose(m.param(t, m.shape(3)), const([], np.int64)))
    m.compare(tmp_path)


def test_split_and_variadic_split(tmp_path):
    m = Model(300)
    for t in TYPES:
        x = m.param(t, [2, 6, 3])
        m.out(o16.split(x, const(1), 3))
        m.out(o16.variadic_split(x, const(-2), const([1, -1, 2])))
        m.out(o16.variadic_split(x, const(0), const([0, 2])))
    m.compare(tmp_path)


def test_gather(tmp_path):
    m = Model(400)
    for t in TYPES + ["string"]:
        x = m.param(t, [3, 5, 4])
        m.out(o16.gather(x, const(m.rng.integers(-5, 5, (2, 3))), const(1)))
        m.out(o16.gather(x, const([[0, 4, -1], [7, -9, 2], [1, 1, 1]]), const(1), 1))
        m.out(o7.gather(x, const(m.rng.integers(0, 4, (3, 2))), const(-1), 1))
        m.out(o1.gather(x, const(2), const(0)))
        i = m.param("i32", [2, 2], m.rng.integers(-3, 3, (2, 2)).astype(np.int32))
        m.out(o16.gather(x, i, const(0)))
    m.compare(tmp_path)


def test_gather_elements_and_gather_nd(tmp_path):
    m = Model(500)
    for t in TYPES:
        x = m.param(t, [3, 5, 4])
        m.out(o16.gather_elements(x, const(m.rng.integers(-5, 5, (3, 7, 4))), 1))
        m.out(o16.gather_nd(x, const([[0, 1], [2, -1]])))
        m.out(o5.gather_nd(x, const(m.rng.integers(0, 4, (3, 5, 2, 1))), 2))
        m.out(o16.gather_nd(x, const(m.rng.integers(-4, 4, (3, 5, 2, 1))), 2))
    m.compare(tmp_path)


def test_scatter_ops(tmp_path):
    m = Model(600)
    for t in TYPES:
        x = m.param(t, [3, 5, 4])
        m.out(o3.scatter_update(x, const([4, 0]), m.param(t, [3, 2, 4]), const(1)))
        idx = np.stack([m.rng.permutation(5) for _ in range(12)])
        idx = idx.reshape(3, 4, 5).transpose(0, 2, 1)
        m.out(o3.scatter_elements_update(x, const(idx), m.param(t, [3, 5, 4]), const(1)))
        m.out(o12.scatter_elements_update(x, const(idx[:, :3] - 5), m.param(t, [3, 3, 4]),
                                          const(-2)))
        m.out(o4.scatter_nd_update(x, const([[0, 1], [2, -3]]), m.param(t, [2, 4])))
        m.out(o15.scatter_nd_update(x, const([[1], [-1]]), m.param(t, [2, 5, 4])))
        m.out(o15.slice_scatter(x, m.param(t, [3, 2, 4]), const([4]), const([0]), const([-2]),
                                const([1])))
    m.compare(tmp_path)


def test_scatter_reductions_on_exact_values(tmp_path):
    """Sums, products, minima and maxima of small integers are exact in every numeric type, so
    the order in which the plugin applies repeated indices cannot show."""
    m = Model(650)
    for t in ("i8", "i32", "u8", "f16", "bf16", "f32"):
        small = lambda shape: m.rng.integers(0, 4, size=shape).astype(dtype_of(t))  # noqa: E731
        for reduction in ("sum", "prod", "min", "max"):
            x = m.param(t, [4, 3], small((4, 3)))
            u = m.param(t, [5, 3], small((5, 3)))
            idx = m.rng.integers(-4, 4, (5, 3))
            m.out(o12.scatter_elements_update(x, const(idx), u, const(0), reduction,
                                              bool(m.rng.integers(2))))
            u2 = m.param(t, [5, 3], small((5, 3)))
            m.out(o15.scatter_nd_update(x, const(m.rng.integers(-4, 4, (5, 1))), u2, reduction))
    m.compare(tmp_path)


def test_slice_and_strided_slice(tmp_path):
    m = Model(700)
    for t in TYPES:
        x = m.param(t, [4, 5, 6])
        m.out(o16.slice(x, const([1, -1]), const([3, -6]), const([1, -2]), const([0, 2])))
        m.out(o16.slice(x, const([-100, 9]), const([100, -100]), const([2, -1]), const([1, 2])))
        m.out(o16.slice(x, const([-3]), const([-100]), const([-1])))
        m.out(o16.strided_slice(x, const([0, 1, 5]), const([3, 5, 0]), const([1, 2, -2]),
                                [0, 0, 0], [0, 0, 0]))
        m.out(o16.strided_slice(x, const([1, 0, 0]), const([0, 0, 0]), const([1, 1, -1]),
                                [0, 1, 1], [1, 1, 1]))
        m.out(o16.strided_slice(x, const([1, 0, 2]), const([0, 0, 0]), const([1, 1, 1]),
                                [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 1]))
        m.out(o16.strided_slice(x, const([0, 0, 0]), const([2, 0, 3]), const([1, 1, 1]),
                                [0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0]))
        m.out(o16.strided_slice(x, const([0, 0, 1]), const([2, 0, 3]), const([1, 1, 1]),
                                [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 1, 0]))
    m.compare(tmp_path)


def test_tile_broadcast_pad_roll(tmp_path):
    m = Model(800)
    for t in TYPES:
        x = m.param(t, [2, 3, 1])
        m.out(o16.tile(x, const([2, 1, 3])))
        m.out(o16.tile(x, const([2, 1, 1, 2])))
        m.out(o3.broadcast(x, const([4, 2, 3, 5])))
        m.out(o3.broadcast(x, const([2, 1, 4]), broadcast_spec="bidirectional"))
        m.out(o3.broadcast(m.param(t, [3]), const([2, 3, 4]), const([1]), "explicit"))
        m.out(o1.broadcast(x, const([2, 3, 6])))
        y = m.param(t, [3, 4])
        for mode in ("constant", "edge", "reflect", "symmetric"):
            m.out(o12.pad(y, const([2, -1]), const([-1, 3]), mode))
        m.out(o1.pad(y, const([1, 0]), const([0, 2]), "edge"))
        if dtype_of(t).type.__module__ == "numpy":  # a Constant value (as a Parameter the
            # plugin pads with 0 whatever the value: docs/compatibility.md)
            value = safe(t, (), m.rng)
            if t in ("i32", "u32", "i64", "u64"):  # the plugin's pad value passes through f32
                value = np.array(m.rng.integers(0, 2**24), dtype_of(t))
            value = o16.constant(value)
            m.out(o12.pad(y, const([1, 1]), const([0, 0]), "constant", value))
        m.out(o16.roll(y, const([1, -6]), const([0, 1])))
        m.out(o16.roll(y, const(5), const(-1)))
        m.out(o16.roll(y, const([2, 2]), const([1, -1])))
    m.compare(tmp_path)


def test_space_depth_batch_shuffle(tmp_path):
    m = Model(900)
    for t in TYPES:
        x = m.param(t, [2, 8, 4, 6])
        for mode in ("blocks_first", "depth_first"):
            m.out(o16.depth_to_space(x, mode, 2))
            m.out(o16.space_to_depth(x, mode, 2))
        m.out(o16.depth_to_space(m.param(t, [1, 8, 2, 3, 2]), "depth_first", 2))
        m.out(o16.batch_to_space(x, const([1, 1, 2, 1]), const([0, 0, 1, 0]), const([0, 0, 0, 2])))
        m.out(o16.space_to_batch(x, const([1, 2, 2, 3]), const([0, 0, 1, 0]), const([0, 0, 1, 0])))
        m.out(o16.shuffle_channels(x, 1, 4))
        m.out(o16.shuffle_channels(x, -1, 3))
    m.compare(tmp_path)


def test_concat(tmp_path):
    m = Model(1000)
    for t in TYPES:
        m.out(o16.concat([m.param(t, [2, 1, 3]), m.param(t, [2, 4, 3])], 1))
    m.compare(tmp_path)


def test_dynamic_shapes_and_run_time_values(tmp_path):
    """Dynamic dims and values that arrive at run time: the shape is found per call."""
    m = Model(1100)
    x = o16.parameter([-1, -1, 4], ov.Type.f32)
    m.params.append(x)
    m.feeds.append(m.rng.standard_normal((3, 5, 4)).astype(np.float32))
    target = m.param("i64", [2], np.array([-1, 4], np.int64))
    m.out(o16.reshape(x, target, False))
    m.out(o16.transpose(x, const([2, 0, 1])))
    indices = m.param("i64", [2], np.array([4, -1], np.int64))
    m.out(o16.gather(x, indices, const(1)))
    m.out(o16.slice(x, const([1]), const([2**62]), const([1]), const([1])))
    m.out(o16.strided_slice(x, const([0, 1]), const([0, -1]), const([1, 1]), [1, 0], [1, 0]))
    m.out(o16.split(x, const(2), 2))
    m.out(o16.pad(x, const([0, 1, 0]), const([1, 0, 2]), "reflect"))
    shape = m.param("i32", [3], np.array([2, 1, 4], np.int32))
    m.out(o16.broadcast(o16.constant(np.float32(2.5)), shape))
    ours = m.compare(tmp_path)
    assert ours[0].shape == (15, 4)


# --- known differences: OpenVINO's side of docs/compatibility.md ("Data movement") ------------
# Each asserts what OpenVINO does today; if one fails, OpenVINO changed: update the document.

def cpu(outputs, params, feeds):
    core = ov.Core()
    compiled = core.compile_model(ov.Model(outputs, params), "CPU", OV_CONFIG)
    request = compiled.create_infer_request()
    request.infer({i: openvino_tensor(ov, v) for i, v in enumerate(feeds)})
    return [from_openvino_tensor(ov, request.get_output_tensor(i))
            for i in range(len(compiled.outputs))]


def test_cpu_gather_7_gives_zeros_outside_0_to_dim():
    x = o16.parameter([5], ov.Type.f32)
    i = o16.parameter([3], ov.Type.i64)
    (out,) = cpu([o7.gather(x, i, const(0))], [x, i],
                 [np.arange(1, 6, dtype=np.float32), np.array([3, -1, 10])])
    assert out.tolist() == [4, 0, 0]  # irexec: IR325


def test_cpu_gather_nd_reads_past_a_dim():
    x = o16.parameter([2, 3], ov.Type.f32)
    i = o16.parameter([1, 2], ov.Type.i64)
    (out,) = cpu([o16.gather_nd(x, i)], [x, i], [np.arange(6, dtype=np.float32).reshape(2, 3),
                                               np.array([[0, 3]])])
    assert out.tolist() == [3]  # the flat offset 0 * 3 + 3: element [1, 0]; irexec: IR325


def test_cpu_strided_slice_with_shrink_and_new_axis_is_wrong():
    x = o16.parameter([3, 5, 4], ov.Type.f32)
    node = o16.strided_slice(x, const([1, 1]), const([2, 2]), const([1, 1]), [0, 0], [0, 0],
                             [0, 1], [1, 0])
    data = np.arange(60, dtype=np.float32).reshape(3, 5, 4)
    (out,) = cpu([node], [x], [data])
    reference = [ov.Tensor(ov.Type.f32, ov.Shape([1, 5, 4]))]
    assert ov.Model([node], [x]).evaluate(reference, [ov.Tensor(data)])
    assert np.array_equal(reference[0].data, data[1, None])  # OpenVINO's reference: right
    assert not np.array_equal(out, data[1, None])


def test_cpu_tile_with_fewer_repeats_than_the_rank_is_wrong():
    x = o16.parameter([3, 2, 3, 2], ov.Type.f32)
    data = np.random.default_rng(0).standard_normal((3, 2, 3, 2)).astype(np.float32)
    (out,) = cpu([o16.tile(x, const([2, 3, 3]))], [x], [data])
    assert out.shape == (3, 4, 9, 6) and not np.array_equal(out, np.tile(data, (2, 3, 3)))


def test_cpu_space_to_batch_with_a_small_dim_is_wrong():
    x = o16.parameter([2, 1, 4, 1], ov.Type.f32)
    data = np.arange(8, dtype=np.float32).reshape(2, 1, 4, 1)
    (out,) = cpu([o16.space_to_batch(x, const([1, 1, 2, 2]), const([0, 0, 0, 0]),
                                     const([0, 0, 0, 1]))], [x], [data])
    padded = np.pad(data, ((0, 0), (0, 0), (0, 0), (0, 1)))
    expected = padded.reshape(2, 1, 2, 2, 1, 2).transpose(3, 5, 0, 1, 2, 4).reshape(8, 1, 2, 1)
    assert not np.array_equal(out, expected)


def test_cpu_pad_value_as_parameter_pads_zero_and_i32_value_goes_through_f32():
    x = o16.parameter([2], ov.Type.i32)
    v = o16.parameter([], ov.Type.i32)
    outs = cpu([o12.pad(x, const([1]), const([0]), "constant", v),
                o12.pad(x, const([1]), const([0]), "constant",
                        o16.constant(np.array(2009850080, np.int32)))],
               [x, v], [np.zeros(2, np.int32), np.array(7, np.int32)])
    assert outs[0].tolist() == [0, 0, 0]  # irexec: [7, 0, 0]
    assert outs[1].tolist() == [2009850112, 0, 0]  # irexec: 2009850080


def test_openvino_refuses_strided_slice_masks_of_different_lengths():
    x = o16.parameter([3, 4], ov.Type.f32)
    with pytest.raises(RuntimeError, match="same size"):
        o16.strided_slice(x, const([1, 1]), const([2, 3]), const([1, 1]), [1], [0, 0, 0, 1])


def test_cpu_refuses_roll_with_a_scalar_shift_for_several_axes():
    x = o16.parameter([3, 4], ov.Type.f32)
    with pytest.raises(RuntimeError, match="mismatch"):
        cpu([o16.roll(x, const(1), const([0, 1]))], [x], [np.zeros((3, 4), np.float32)])


def test_openvino_pad_1_crops_and_reshape_keeps_a_wrong_count():
    x = o16.parameter([3, 4], ov.Type.f32)
    node = o1.pad(x, const([-1, 0]), const([0, 1]), "constant")
    assert node.get_output_partial_shape(0) == ov.PartialShape([2, 5])  # irexec: IR332
    y = o16.parameter([2, 3], ov.Type.f32)
    node = o16.reshape(y, const([0, 4]), True)
    assert node.get_output_partial_shape(0) == ov.PartialShape([2, 4])  # irexec: IR326


def test_cpu_narrows_64_bit_data_and_drops_f8_negative_zero():
    x = o16.parameter([2], ov.Type.i64)
    (out,) = cpu([o16.transpose(x, const([0]))], [x], [np.array([2**40 + 3, 7], np.int64)])
    assert out.tolist() == [3, 7]
    y = o16.parameter([1], ov.Type.f8e5m2)
    import ml_dtypes

    (out,) = cpu([o12.pad(y, const([1]), const([0]), "constant")], [y],
                 [np.array([0x80], np.uint8).view(ml_dtypes.float8_e5m2)])
    assert out.view(np.uint8).tolist() == [0, 0]  # irexec: [0x00, 0x80]
