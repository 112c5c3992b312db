"""Shape subgraphs as OpenVINO's converters write them, built with OpenVINO's Python API: the
dims OpenVINO declares in the saved XML are all confirmed by irexec's inference (no IR401), the
outputs' partial shapes are as tight as OpenVINO's, and both runtimes give the same results."""

import numpy as np
import pytest

import irexec
from irexec.ir.shape import PartialShape
from tests.conformance.oracle import OV_CONFIG

from .standins import standins  # noqa: F401 - the fixture

ov = pytest.importorskip("openvino")
import openvino.opset8 as o  # noqa: E402
import openvino.opset12 as o12  # noqa: E402 - Range-4

pytestmark = pytest.mark.usefixtures("standins")


def dims_text(shape) -> PartialShape:
    """OpenVINO's partial shape as irexec's."""
    return PartialShape([(d.get_min_length(), None if d.get_max_length() < 0 else
                          d.get_max_length()) if d.is_dynamic else d.get_length()
                         for d in shape])


def confirm(tmp_path, outputs, params, feeds, name):
    model = ov.Model(outputs, params, name)
    xml = tmp_path / f"{name}.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    ours = irexec.read_model(xml)
    assert [str(d) for d in ours.diagnostics] == []  # no IR401: every declared dim confirmed
    for mine, theirs in zip(ours.outputs, model.outputs):
        assert mine.partial_shape == dims_text(theirs.get_partial_shape()), name
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    run = irexec.compile_model(ours)
    names = [p.get_friendly_name() for p in params]
    for feed in feeds:
        theirs = compiled(feed)
        mine = run(dict(zip(names, feed)))
        for out, got in zip(compiled.outputs, mine.values()):
            np.testing.assert_array_equal(got, theirs[out])
    return ours


def batch_of(x, index=0):
    return o.gather(o.shape_of(x), o.constant(np.array([index], np.int64)),
                    o.constant(np.int64(0)))


@pytest.mark.parametrize("batch", [-1, (1, 8)])
def test_shape_of_gather_concat_reshape(tmp_path, batch):
    import openvino as ovm
    dim = ovm.Dimension(*batch) if isinstance(batch, tuple) else ovm.Dimension(batch)
    x = o.parameter(ovm.PartialShape([dim, 12, 64]), np.float32, name="x")
    target = o.concat([batch_of(x), o.constant(np.array([768], np.int64))], 0)
    y = o.reshape(x, target, special_zero=False)
    model = confirm(tmp_path, [y.output(0)], [x],
                    [[np.ones((n, 12, 64), np.float32)] for n in (1, 3, 8)], "reshape")
    assert model.outputs[0].partial_shape == PartialShape([batch, 768])


def test_heads_split_with_arithmetic_and_unsqueeze(tmp_path):
    """x [?,?,768] -> [B, T, 12, 64]: B and T gathered as scalars, unsqueezed, concatenated."""
    x = o.parameter([-1, -1, 768], np.float32, name="x")
    shape = o.shape_of(x)
    parts = [o.unsqueeze(o.gather(shape, o.constant(np.int64(i)), o.constant(np.int64(0))),
                         o.constant(np.array([0], np.int64))) for i in (0, 1)]
    heads = o.divide(o.gather(shape, o.constant(np.array([2], np.int64)),
                              o.constant(np.int64(0))), o.constant(np.array([64], np.int64)))
    target = o.concat(parts + [heads, o.constant(np.array([64], np.int64))], 0)
    y = o.reshape(x, target, special_zero=False)
    model = confirm(tmp_path, [y.output(0)], [x],
                    [[np.ones((b, t, 768), np.float32)] for b, t in ((1, 5), (2, 3))], "heads")
    assert model.outputs[0].partial_shape == PartialShape([-1, -1, 12, 64])


def test_range_from_shape_of(tmp_path):
    """Position ids: Range(0, x.shape[1], 1), broadcast over the batch."""
    x = o.parameter([2, -1], np.int64, name="x")
    length = o.gather(o.shape_of(x), o.constant(np.int64(1)), o.constant(np.int64(0)))
    ids = o12.range(o.constant(np.int64(0)), length, o.constant(np.int64(1)), "i64")
    batch = o.concat([batch_of(x), o.unsqueeze(length, o.constant(np.array([0], np.int64)))],
                     0)
    pos = o.broadcast(ids, batch)
    confirm(tmp_path, [ids.output(0), pos.output(0)], [x],
            [[np.zeros((2, n), np.int64)] for n in (1, 7, 4)], "positions")


def test_broadcast_to_a_computed_shape(tmp_path):
    import openvino as ovm
    x = o.parameter(ovm.PartialShape([ovm.Dimension(1, 8), 3]), np.float32, name="x")
    target = o.concat([batch_of(x), o.constant(np.array([4], np.int64))], 0)
    y = o.broadcast(o.constant(np.float32(0.5)), target)
    model = confirm(tmp_path, [y.output(0)], [x],
                    [[np.zeros((n, 3), np.float32)] for n in (1, 5)], "broadcast")
    assert model.outputs[0].partial_shape == PartialShape([(1, 8), 4])


def test_flatten_with_a_product_of_dims(tmp_path):
    """x.view(B, -1) written with the product computed: [?,3,4,5] -> [?,60]."""
    x = o.parameter([-1, 3, 4, 5], np.float32, name="x")
    inner = o.multiply(o.multiply(batch_of(x, 1), batch_of(x, 2)), batch_of(x, 3))
    y = o.reshape(x, o.concat([batch_of(x), inner], 0), special_zero=False)
    model = confirm(tmp_path, [y.output(0)], [x],
                    [[np.arange(n * 60, dtype=np.float32).reshape(n, 3, 4, 5)] for n in (1, 2)],
                    "flatten")
    assert model.outputs[0].partial_shape == PartialShape([-1, 60])
