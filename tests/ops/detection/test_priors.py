"""PriorBox-1/8 and PriorBoxClustered-1: the specification's examples, properties against the
loop references of tests/ops/detection/reference.py, OpenVINO conformance (bit-exact, constant
and computed grid sizes), the output shape from output_size's values or bounds, and coded errors
for attributes OpenVINO cannot run."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irexec
from irexec.builder import ModelBuilder
from irexec.ir.element_type import from_name
from tests.ops.compute_support import build_layer, layer_error, openvino_and_irexec, run_layer
from tests.ops.detection import reference as ref

SPEC_PB = dict(aspect_ratio=(2.0,), clip=False, density=(), fixed_ratio=(), fixed_size=(),
               flip=True, max_size=(38.46,), min_size=(16.0,), offset=0.5, step=16.0,
               variance=(0.1, 0.1, 0.2, 0.2))
SPEC_PBC = dict(clip=False, height=(44.0, 10.0, 30.0, 19.0, 94.0, 32.0, 61.0, 53.0, 17.0),
                offset=0.5, step=16.0, variance=(0.1, 0.1, 0.2, 0.2),
                width=(86.0, 13.0, 57.0, 39.0, 68.0, 34.0, 142.0, 50.0, 23.0))


def sizes(*v):
    return np.array(v, np.int64)


def out_shape(model):
    return str(model.results[0].inputs[0].source.partial_shape)


@pytest.mark.parametrize("version", ["opset1", "opset8"])
def test_prior_box_spec_example(version):
    model, _ = build_layer("PriorBox", sizes(24, 42), sizes(384, 672), consts=(0, 1),
                           version=version, **SPEC_PB)
    assert out_shape(model) == "[2,16128]"
    got = irexec.compile_model(model)({})["y0"]
    np.testing.assert_array_equal(got, ref.prior_box(24, 42, 384, 672, SPEC_PB))


def test_prior_box_clustered_spec_example():
    model, _ = build_layer("PriorBoxClustered", sizes(10, 19), sizes(180, 320), consts=(0, 1),
                           **SPEC_PBC)
    assert out_shape(model) == "[2,6840]"
    got = irexec.compile_model(model)({})["y0"]
    np.testing.assert_array_equal(got, ref.prior_box_clustered(10, 19, 180, 320, SPEC_PBC))


def _grid_model(op, version, feature_shape, **at):
    """PriorBox over the spatial dims of a feature map Parameter (ShapeOf -> StridedSlice)."""
    b = ModelBuilder("grid")
    fm = b.parameter("fm", from_name("f32"), feature_shape)
    shape = b.op("ShapeOf", fm, version="opset3", output_type=from_name("i32"))
    hw = b.op("StridedSlice", shape, b.constant(sizes(2)), b.constant(sizes(4)),
              b.constant(sizes(1)), version="opset1", begin_mask=(0,), end_mask=(0,))
    y = b.op(op, hw, b.constant(np.array([300, 300], np.int32)), version=version, **at)
    y.names[:] = ["y"]
    b.result(y, "r")
    return b.build()


def test_output_length_follows_the_grid_values_or_bounds():
    at = dict(min_size=(8.0,), max_size=(16.0,), aspect_ratio=(2.0,), flip=True, offset=0.5)
    assert out_shape(_grid_model("PriorBox", "opset8", [1, 3, 5, 6], **at)) == "[2,480]"
    assert out_shape(_grid_model("PriorBox", "opset8", [1, 3, -1, 6], **at)) == "[2,?]"
    bounded = _grid_model("PriorBox", "opset8", [1, 3, (2, 4), 6], **at)
    assert out_shape(bounded) == "[2,192..384]"
    model = _grid_model("PriorBoxClustered", "opset1", [1, 3, -1, -1], width=(2.0, 3.0),
                        height=(4.0, 1.0), offset=0.5)
    assert out_shape(model) == "[2,?]"
    got = irexec.compile_model(model)({"fm": np.zeros((1, 3, 3, 2), np.float32)})["y"]
    np.testing.assert_array_equal(got, ref.prior_box_clustered(
        3, 2, 300, 300, dict(width=(2.0, 3.0), height=(4.0, 1.0), offset=0.5)))


@pytest.mark.parametrize("grid", [(0, 3), (2, 0)])
@pytest.mark.filterwarnings("error")
def test_empty_grids_give_empty_outputs(grid):
    got = run_layer("PriorBox", sizes(*grid), sizes(10, 10), consts=(0, 1), version="opset8",
                    min_size=(2.0,), offset=0.5)
    assert got.shape == (2, 0)
    got = run_layer("PriorBoxClustered", sizes(*grid), sizes(10, 10), consts=(0, 1),
                    width=(2.0,), height=(2.0,), offset=0.5)
    assert got.shape == (2, 0)


# --- properties -------------------------------------------------------------------------------

ratios = st.lists(st.sampled_from([0.5, 2.0, 3.0, 1.0, 1.5]), max_size=3)


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 3), w=st.integers(1, 4), ih=st.integers(5, 40), iw=st.integers(5, 40),
       mins=st.lists(st.sampled_from([2.0, 5.5, 9.0]), min_size=1, max_size=2),
       with_max=st.booleans(), ars=ratios, flip=st.booleans(), clip=st.booleans(),
       step=st.sampled_from([0.0, 4.0, 7.5]), offset=st.sampled_from([0.5, 0.2]),
       variance=st.sampled_from([(), (0.2,), (0.1, 0.1, 0.2, 0.3)]), order=st.booleans(),
       scale_all=st.booleans())
def test_prior_box_matches_the_loop_reference(h, w, ih, iw, mins, with_max, ars, flip, clip,
                                             step, offset, variance, order, scale_all):
    at = dict(min_size=tuple(mins), aspect_ratio=tuple(ars), flip=flip, clip=clip, step=step,
              offset=offset, variance=variance, min_max_aspect_ratios_order=order,
              scale_all_sizes=scale_all)
    if with_max and scale_all:
        at["max_size"] = tuple(m + 3 for m in mins)
    if not scale_all:
        at["min_size"] = tuple(m / 40 for m in mins)
        at["step"] = step / 40
    got = run_layer("PriorBox", sizes(h, w), sizes(ih, iw), consts=(0, 1), version="opset8",
                    **at)
    np.testing.assert_array_equal(got, ref.prior_box(h, w, ih, iw, at))


@settings(max_examples=25, deadline=None)
@given(h=st.integers(1, 3), w=st.integers(1, 3), fixed=st.lists(
    st.sampled_from([4.0, 7.0, 9.5]), min_size=1, max_size=2), dens=st.integers(1, 3),
       ars=ratios, use_ratio=st.booleans(), step=st.sampled_from([0.0, 8.0]))
def test_prior_box_density_matches_the_loop_reference(h, w, fixed, dens, ars, use_ratio, step):
    at = dict(fixed_size=tuple(fixed), density=tuple(float(dens) for _ in fixed), offset=0.5,
              step=step)
    if use_ratio:
        at["fixed_ratio"] = (2.0,)  # with no aspect_ratio: as many boxes as OpenVINO sizes
    else:
        at["aspect_ratio"] = tuple(ars)
    got = run_layer("PriorBox", sizes(h, w), sizes(31, 23), consts=(0, 1), version="opset8",
                    **at)
    np.testing.assert_array_equal(got, ref.prior_box(h, w, 31, 23, at))


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 3), w=st.integers(1, 4), n=st.integers(0, 3), clip=st.booleans(),
       steps=st.sampled_from([(0.0, 0.0, 0.0), (6.0, 0.0, 0.0), (0.0, 5.0, 7.0),
                              (3.0, 0.0, 9.0)]),
       variance=st.sampled_from([(), (0.2,), (0.1, 0.1, 0.2, 0.3)]))
def test_prior_box_clustered_matches_the_loop_reference(h, w, n, clip, steps, variance):
    rng = np.random.default_rng(h * 31 + w * 7 + n)
    at = dict(width=tuple(rng.uniform(1, 30, n).round(2)),
              height=tuple(rng.uniform(1, 30, n).round(2)), clip=clip, step=steps[0],
              step_w=steps[1], step_h=steps[2], offset=0.5, variance=variance)
    got = run_layer("PriorBoxClustered", sizes(h, w), sizes(29, 41), consts=(0, 1), **at)
    np.testing.assert_array_equal(got, ref.prior_box_clustered(h, w, 29, 41, at))


def test_prior_box_1_puts_max_sizes_before_aspect_ratios():
    at = dict(min_size=(4.0,), max_size=(9.0,), aspect_ratio=(2.0,), offset=0.5)
    got = run_layer("PriorBox", sizes(1, 1), sizes(10, 10), consts=(0, 1), version="opset1",
                    **at)
    square = np.sqrt(np.float32(36)) * np.float32(0.5) * np.float32(0.1)
    np.testing.assert_allclose(got[0, 4:8], [0.5 - square, 0.5 - square, 0.5 + square,
                                             0.5 + square], rtol=1e-6)
    flipped = run_layer("PriorBox", sizes(1, 1), sizes(10, 10), consts=(0, 1), version="opset8",
                        min_max_aspect_ratios_order=False, **at)
    np.testing.assert_array_equal(flipped[0, 8:12], got[0, 4:8])


# --- OpenVINO conformance ---------------------------------------------------------------------

OV_CASES = [
    ("opset8", dict(min_size=[2.0, 5.0], max_size=[3.0, 9.0], aspect_ratio=[2.0, 3.0],
                    flip=True, clip=False, offset=0.5, step=4.0, variance=[0.1, 0.1, 0.2, 0.2])),
    ("opset8", dict(min_size=[2.0, 5.0], max_size=[3.0, 9.0], aspect_ratio=[2.0], flip=True,
                    clip=True, offset=0.5, min_max_aspect_ratios_order=False, variance=[0.3])),
    ("opset1", dict(min_size=[2.0, 5.0], max_size=[3.0, 9.0], aspect_ratio=[2.0, 0.5],
                    flip=True, offset=0.3, step=0.0)),
    ("opset8", dict(min_size=[0.2, 0.5], aspect_ratio=[2.0], offset=0.5, step=0.25,
                    scale_all_sizes=False)),
    ("opset8", dict(min_size=[0.2], aspect_ratio=[2.0], flip=True, offset=0.5,
                    scale_all_sizes=False)),
    ("opset8", dict(fixed_size=[8.0, 5.0], density=[2.0, 1.0], aspect_ratio=[2.0], offset=0.5,
                    step=4.0)),
    ("opset8", dict(fixed_size=[8.0], density=[3.0], fixed_ratio=[1.5], offset=0.5, step=4.0)),
    ("opset8", dict(fixed_size=[7.0], density=[2.0], offset=0.5, clip=True)),
]


def test_openvino_conformance_prior_box(tmp_path):
    """Constant grids (OpenVINO folds them with its reference) and a grid computed from a
    dynamic feature map (the CPU plugin's own kernel runs)."""
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset3 as o3
    import openvino.opset8 as o8
    fm = o1.parameter([1, 3, -1, -1], np.float32)
    hw = o1.strided_slice(o3.shape_of(fm, "i32"), o1.constant(sizes(2)), o1.constant(sizes(4)),
                          o1.constant(sizes(1)), [0], [0])
    image = o1.constant(np.array([17, 23], np.int32))
    outputs = []
    for version, at in OV_CASES:
        opset = o8 if version == "opset8" else o1
        outputs.append((at, opset.prior_box(o1.constant(np.array([3, 4], np.int32)), image,
                                            at)))
        odd = any(int(f) % 2 for f in at.get("fixed_size", ()))  # see the tests below
        if at.get("min_max_aspect_ratios_order", True) and not odd:
            outputs.append((at, opset.prior_box(hw, image, at)))
    ours, theirs = openvino_and_irexec(ov, tmp_path, [fm], [o.output(0) for _, o in outputs],
                                       [np.zeros((1, 3, 3, 4), np.float32)])
    for (at, _), a, b in zip(outputs, ours, theirs):
        np.testing.assert_array_equal(a, b, str(at))


def test_cpu_plugin_centres_density_boxes_of_odd_fixed_sizes_half_a_pixel_off(tmp_path):
    """OpenVINO's reference kernel (which folds a constant grid) shifts density boxes by
    int(fixed_size)/2, an integer division; the CPU plugin's own kernel (a computed grid) by
    fixed_size/2. irexec follows the reference, the result of every SSD model with static
    shapes."""
    ov = pytest.importorskip("openvino")
    import openvino.opset1 as o1
    import openvino.opset3 as o3
    import openvino.opset8 as o8
    at = dict(fixed_size=[5.0], density=[1.0], offset=0.5, step=4.0)
    fm = o1.parameter([1, 3, -1, -1], np.float32)
    hw = o1.strided_slice(o3.shape_of(fm, "i32"), o1.constant(sizes(2)), o1.constant(sizes(4)),
                          o1.constant(sizes(1)), [0], [0])
    image = o1.constant(np.array([17, 23], np.int32))
    folded = o8.prior_box(o1.constant(np.array([1, 1], np.int32)), image, at)
    computed = o8.prior_box(hw, image, at)
    ours, theirs = openvino_and_irexec(ov, tmp_path, [fm], [folded.output(0),
                                                            computed.output(0)],
                                       [np.zeros((1, 3, 1, 1), np.float32)])
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], ours[0])
    # centre 2 - 5//2 + 5/2 = 2.5 (reference) against 2 - 5/2 + 5/2 = 2.0 (plugin)
    np.testing.assert_allclose(theirs[1][0] * [23, 17, 23, 17], [0, 0, 4.5, 4.5], atol=1e-5)
    np.testing.assert_allclose(ours[1][0] * [23, 17, 23, 17], [0, 0, 5.0, 5.0], atol=1e-5)


def test_openvino_refuses_prior_box_8_in_the_other_order_on_a_computed_grid(tmp_path):
    ov = pytest.importorskip("openvino")
    at = dict(min_size=(2.0,), aspect_ratio=(2.0,), offset=0.5, min_max_aspect_ratios_order=False)
    model = _grid_model("PriorBox", "opset8", [1, 3, -1, -1], **at)
    node = next(n for n in model.nodes if n.type == "PriorBox")
    assert "refuses PriorBox-8" in node.op.openvino_refuses(node)
    irexec.save_model(model, tmp_path / "m.xml")
    core = ov.Core()
    with pytest.raises(RuntimeError, match="PriorBox"):
        core.compile_model(core.read_model(str(tmp_path / "m.xml")), "CPU")
    got = irexec.compile_model(model)({"fm": np.zeros((1, 3, 2, 3), np.float32)})["y"]
    np.testing.assert_array_equal(got, ref.prior_box(2, 3, 300, 300, at))
    for other in (_grid_model("PriorBox", "opset8", [1, 3, 2, 3], **at),
                  _grid_model("PriorBox", "opset8", [1, 3, -1, -1], min_size=(2.0,),
                              offset=0.5)):
        node = next(n for n in other.nodes if n.type == "PriorBox")
        assert node.op.openvino_refuses(node) is None


# --- bad attributes and inputs ----------------------------------------------------------------

@pytest.mark.parametrize("at", [
    dict(min_size=(2.0,), offset=0.5, variance=(0.1, 0.2)),
    dict(fixed_size=(4.0, 8.0), density=(1.0,), offset=0.5),
    dict(fixed_size=(4.0,), density=(0.0,), offset=0.5),
    dict(min_size=(-2.0,), offset=0.5),
    dict(min_size=(2.0,), fixed_size=(4.0,), density=(1.0,), offset=0.5),
    dict(min_size=(2.0,), max_size=(3.0, 4.0), offset=0.5),
    dict(fixed_size=(4.0,), density=(2.0,), fixed_ratio=(1.0, 2.0), offset=0.5),
])
def test_prior_box_attributes_openvino_cannot_run_are_errors(at):
    e = layer_error("PriorBox", sizes(2, 2), sizes(10, 10), consts=(0, 1), version="opset8",
                    **at)
    assert [d.code for d in e.diagnostics] == ["IR302"], [str(d) for d in e.diagnostics]


def test_prior_box_clustered_widths_and_heights_must_pair():
    e = layer_error("PriorBoxClustered", sizes(2, 2), sizes(10, 10), consts=(0, 1),
                    width=(1.0, 2.0), height=(1.0,), offset=0.5)
    assert e.code == "IR302"


@pytest.mark.parametrize("grid, image, code", [
    (sizes(2, 2, 2), sizes(10, 10), "IR307"),
    (sizes(-1, 2), sizes(10, 10), "IR308"),
    (sizes(2, 2), sizes(0, 10), "IR308"),
])
def test_prior_box_bad_sizes(grid, image, code):
    e = layer_error("PriorBox", grid, image, consts=(0, 1), version="opset8", min_size=(2.0,),
                    offset=0.5)
    assert e.code == code


def test_prior_box_inputs_must_be_integers():
    e = layer_error("PriorBox", np.array([2.0, 2.0], np.float32), sizes(10, 10),
                    consts=(0, 1), version="opset8", min_size=(2.0,), offset=0.5)
    assert e.code == "IR304"


@pytest.mark.parametrize("op, at", [
    ("PriorBox", dict(min_size=(2.0,), offset=0.5)),
    ("PriorBoxClustered", dict(width=(1.0,), height=(1.0,), offset=0.5)),
])
@pytest.mark.parametrize("grid, image", [((-1, 3), (10, 10)), ((2, 3), (0, 10))])
def test_bad_sizes_given_when_run_are_errors(op, at, grid, image):
    e = layer_error(op, sizes(*grid), sizes(*image), version="opset8" if op == "PriorBox"
                    else "opset1", **at)
    assert e.code == "IR308"


def test_generated_sizes_make_a_grid():
    from irexec.runtime.inputs import make_inputs
    model, _ = build_layer("PriorBox", sizes(2, 2), sizes(10, 10), version="opset8",
                           min_size=(2.0,), offset=0.5)
    feed = make_inputs(model, {}, seed=1)
    assert (feed["in0"] >= 1).all() and (feed["in1"] >= 1).all()
    got = irexec.compile_model(model)(feed)["y0"]
    assert got.shape == (2, 4 * int(np.prod(feed["in0"])))
