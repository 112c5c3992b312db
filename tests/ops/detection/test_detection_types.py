"""Every detection op of this folder's proposal family on f16 and bf16 data against OpenVINO's
CPU plugin (irexec computes them in f32 and rounds the outputs once, as the plugin does)."""

import numpy as np
import pytest

import irexec
from tests.ops.shapeops_oracle import check, openvino
from tests.ops.support import assert_same_bits, dtype_of


def corners(rng, count, scale):
    c = rng.random((count, 2)) * scale
    s = rng.random((count, 2)) * scale / 3 + 2
    return np.concatenate([c - s, c + s], 1)


def ranks(rng, shape):
    n = int(np.prod(shape))
    return (rng.permutation(n) / n).reshape(shape)


@pytest.mark.parametrize("type_name", ["f16", "bf16"])
def test_half_types_agree_with_openvino(tmp_path, type_name):
    ov = openvino()
    import openvino.opset1 as o1
    import openvino.opset4 as o4
    import openvino.opset8 as o8
    import openvino.opset9 as o9
    from openvino.utils.node_factory import NodeFactory
    factory = NodeFactory("opset6")
    dt = dtype_of(type_name)
    et = ov.Type.bf16 if type_name == "bf16" else dt
    rng = np.random.default_rng(0)
    outs, params, feed = [], [], []

    def add(node_outputs, shapes_and_values):
        ps = [o1.parameter(list(v.shape), et) for v in shapes_and_values]
        outs.extend(node_outputs(ps))
        params.extend(ps)
        feed.extend(v.astype(dt) for v in shapes_and_values)

    u = np.uint32
    add(lambda p: o4.proposal(*p, dict(base_size=u(16), pre_nms_topn=u(30), post_nms_topn=u(12),
                                       nms_thresh=0.7, feat_stride=u(16), min_size=u(4),
                                       ratio=[0.5, 1.0, 2.0], scale=[2.0, 4.0, 8.0])).outputs(),
        [ranks(rng, (1, 18, 4, 5)), rng.standard_normal((1, 36, 4, 5)) * 0.3,
         np.array([64, 80, 1])])
    priors, classes = 8, 3
    c, s = rng.random((priors, 2)) * 0.8 + 0.1, rng.random((priors, 2)) * 0.2 + 0.05
    prior_boxes = np.stack([np.concatenate([c - s, c + s], 1).reshape(-1),
                            np.tile([0.1, 0.1, 0.2, 0.2], priors)])[None]
    add(lambda p: [o8.detection_output(*p, dict(keep_top_k=[5], nms_threshold=0.5,
                                                normalized=True)).output(0)],
        [rng.standard_normal((2, priors * 4)) * 0.5, ranks(rng, (2, priors * classes)),
         prior_boxes])
    add(lambda p: factory.create("ExperimentalDetectronTopKROIs", p,
                                 dict(max_rois=5)).outputs(),
        [rng.random((9, 4)), rng.permutation(9) / 9])
    add(lambda p: factory.create("ExperimentalDetectronPriorGridGenerator", p,
                                 dict(flatten=True, h=0, w=0, stride_x=0.0,
                                      stride_y=0.0)).outputs(),
        [rng.random((3, 4)) * 10, np.zeros((1, 4, 4, 5)), np.zeros((1, 3, 64, 80))])
    add(lambda p: factory.create("ExperimentalDetectronROIFeatureExtractor", p,
                                 dict(output_size=3, sampling_ratio=2, pyramid_scales=[4, 8],
                                      aligned=False)).outputs(),
        [corners(rng, 6, 180), rng.random((1, 8, 16, 16)), rng.random((1, 8, 8, 8))])
    add(lambda p: factory.create("ExperimentalDetectronDetectionOutput", p,
                                 dict(score_threshold=0.05, nms_threshold=0.5,
                                      max_delta_log_wh=4.0, num_classes=4, post_nms_count=5,
                                      max_detections_per_image=6,
                                      class_agnostic_box_regression=False,
                                      deltas_weights=[10., 10., 5., 5.])).outputs(),
        [corners(rng, 12, 60), rng.standard_normal((12, 16)) * 0.3, ranks(rng, (12, 4)),
         np.array([[64, 80, 1]])])
    anchors = corners(rng, 60, 60)
    add(lambda p: factory.create("ExperimentalDetectronGenerateProposalsSingleImage", p,
                                 dict(min_size=0.0, nms_threshold=0.7, post_nms_count=10,
                                      pre_nms_count=30)).outputs(),
        [np.array([64, 80, 1]), anchors, rng.standard_normal((12, 4, 5)) * 0.3,
         ranks(rng, (3, 4, 5))])
    add(lambda p: o9.generate_proposals(*p, 0.0, 0.6, 25, 12).outputs(),
        [np.array([[64, 80, 1], [50, 70, 2]]), anchors.reshape(4, 5, 3, 4),
         rng.standard_normal((2, 12, 4, 5)) * 0.3, ranks(rng, (2, 3, 4, 5))])
    ours = check(tmp_path, outs, params, [feed], exact=False, rtol=2e-2, atol=2e-2)
    # written back by irexec, read again: the same layers, the same results
    model = irexec.read_model(tmp_path / "model.xml")
    irexec.save_model(model, tmp_path / "again.xml")
    again = irexec.read_model(tmp_path / "again.xml")
    names = [p.get_friendly_name() for p in params]
    result = irexec.compile_model(again)(dict(zip(names, feed)))
    for a, b in zip(ours.values(), result.values()):
        assert_same_bits(a, b)
