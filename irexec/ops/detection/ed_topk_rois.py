"""ExperimentalDetectronTopKROIs-6: the ``max_rois`` boxes of highest probability, best first.

Equal probabilities keep their input order (OpenVINO's reference kernel uses ``std::sort``, whose
order for ties is unspecified; docs/compatibility.md). With fewer boxes than ``max_rois`` the
rows after them are 0.
"""

import numpy as np

from irexec.errors import OpError
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.detection.proposal_common import merge_dim
from irexec.ops.spec import (
    REAL,
    Attr,
    Input,
    Op,
    OpSpec,
    Output,
    Rank,
    TensorType,
    TypeVar,
    register,
)

T = TypeVar("T", REAL)


def _infer(ctx):
    rois, probs = ctx.input_shape(0), ctx.input_shape(1)
    if ctx.attrs["max_rois"] < 0:
        ctx.error("IR302", f"max_rois is {ctx.attrs['max_rois']}; it must not be negative")
    try:
        if rois.rank_is_static:
            if rois[1].is_static and rois[1].min != 4:
                raise OpError(f"input_rois' last dim is {rois[1]}; it must be 4", code="IR307")
            if probs.rank_is_static:
                merge_dim(rois[0], probs[0], "the number of rois and of probabilities")
    except OpError as e:
        ctx.error(e.code, str(e))
    return [TensorType(ctx.type_var("T"), PartialShape([Dimension.static(ctx.attrs["max_rois"]),
                                                        Dimension.static(4)]))]


@register
class ExperimentalDetectronTopKROIs(Op):
    spec = OpSpec(
        type="ExperimentalDetectronTopKROIs",
        since=6,
        until=16,
        attrs=(Attr("max_rois", "int", default=0, doc="how many boxes to keep (the output rows)"),),
        inputs=(
            Input("input_rois", T, Rank(exact=2), doc="[N, 4]"),
            Input("rois_probs", T, Rank(exact=1), doc="[N]"),
        ),
        outputs=(Output("output_rois", "[max_rois, 4]: the best boxes, best first", type=T),),
        doc="The max_rois boxes of highest probability.",
    )
    infer = staticmethod(_infer)

    @staticmethod
    def kernel(input_rois, rois_probs, *, max_rois):
        order = np.argsort(-rois_probs.astype(np.float64), kind="stable")[:max_rois]
        out = np.zeros((max_rois, 4), input_rois.dtype)
        out[:len(order)] = input_rois[order]
        return out
