"""RegionYolo-1: the region layer of YOLO v2 (do_softmax: sigmoid on x, y and the objectness,
softmax over the classes, output flattened from axis to end_axis) and the YOLO layer of v3 (no
softmax: sigmoid on x, y, the objectness and every class, for the regions mask names)."""

import numpy as np

from irexec.ir.shape import PartialShape
from irexec.ir.shape_rules import normalize_axis, product
from irexec.kernels.numeric import compute_dtype, narrow
from irexec.ops.detection.common import REAL_T
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, Rank, TensorType, register


def _regions(attrs) -> int:
    return attrs["num"] if attrs["do_softmax"] else len(attrs["mask"])


@register
class RegionYolo(Op):
    spec = OpSpec(
        type="RegionYolo",
        numerics="transcendental",
        since=1,
        attrs=(
            Attr("anchors", "float_list", default=(),
                 doc="prior box [width, height] pairs, for post-processing; not read here"),
            Attr("axis", "int", doc="the first axis flattened when do_softmax"),
            Attr("coords", "int", doc="coordinates per region (x, y first), at least 2"),
            Attr("classes", "int", doc="classes per region, at least 0"),
            Attr("end_axis", "int", doc="the last axis flattened when do_softmax"),
            Attr("num", "int", doc="regions per cell when do_softmax"),
            Attr("do_softmax", "bool", default=True,
                 doc="true: softmax over the classes (YOLO v2); false: sigmoid (YOLO v3)"),
            Attr("mask", "int_list", default=(),
                 doc="the regions kept when do_softmax is false (only their count matters)"),
        ),
        inputs=(Input("data", REAL_T, Rank(exact=4),
                      doc="[N, regions*(coords+classes+1), H, W]; regions is num when "
                          "do_softmax, else the length of mask"),),
        outputs=(Output("output", "do_softmax: data flattened from axis to end_axis; else [N, "
                                  "len(mask)*(coords+classes+1), H, W]", type=REAL_T),),
        doc="Activates the box, objectness and class entries of YOLO's region outputs.",
    )

    @staticmethod
    def infer(ctx):
        a = ctx.attrs
        if a["coords"] < 2 or a["classes"] < 0 or (a["do_softmax"] and a["num"] < 0):
            ctx.error("IR302", f"coords {a['coords']}, classes {a['classes']}, num {a['num']}: "
                               f"coords must be at least 2, classes and num at least 0")
        shape = ctx.input_shape(0)
        et = ctx.output_element_types(1)[0]
        if not shape.rank_is_static:
            return [TensorType(et, PartialShape.dynamic())]
        entries = a["coords"] + a["classes"] + 1
        need = _regions(a) * entries
        if shape[1].max is not None and shape[1].max < need:
            what = "num" if a["do_softmax"] else "len(mask)"
            ctx.error("IR307", f"data has {shape[1]} channels; {what}*(coords+classes+1) = "
                               f"{need} are needed")
        if not a["do_softmax"]:
            return [TensorType(et, shape.replace(1, PartialShape([need])[0]))]
        first = normalize_axis(a["axis"], shape.rank, "axis")
        last = normalize_axis(a["end_axis"], shape.rank, "end_axis")
        dims = list(shape)
        if last < first:
            return [TensorType(et, shape)]
        out = dims[:first] + [product(dims[first:last + 1])] + dims[last + 1:]
        return [TensorType(et, PartialShape(out))]

    @staticmethod
    def kernel(data, *, anchors, axis, coords, classes, end_axis, num, do_softmax, mask):
        # OpenVINO reads the regions from the start of the flat buffer, batch after batch
        # [regions*entries, H, W] apart, whatever the channel count (equal to it in real models)
        ct = compute_dtype(data.dtype)
        n, _, h, w = data.shape
        regions = num if do_softmax else len(mask)
        entries = coords + classes + 1
        used = n * regions * entries * h * w
        x = data.reshape(-1)[:used].astype(ct).reshape(n, regions, entries, h * w)
        out = x.copy()
        one = ct.type(1)
        with np.errstate(over="ignore"):
            sig = list(range(2)) + ([coords] if do_softmax else list(range(coords, entries)))
            out[:, :, sig] = one / (one + np.exp(-x[:, :, sig]))
            if do_softmax and classes:
                cls = x[:, :, coords + 1:]
                e = np.exp(cls - cls.max(axis=2, keepdims=True))
                out[:, :, coords + 1:] = e / e.sum(axis=2, keepdims=True)
        out = narrow(out, data.dtype).reshape(-1)
        if not do_softmax:
            return out.reshape(n, regions * entries, h, w)
        full = data.copy().reshape(-1)
        full[:used] = out
        rank = data.ndim
        first, last = axis % rank, end_axis % rank
        if last < first:
            return full.reshape(data.shape)
        return full.reshape(data.shape[:first] + (int(np.prod(data.shape[first:last + 1])),)
                            + data.shape[last + 1:])
