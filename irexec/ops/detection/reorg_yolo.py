"""ReorgYolo-1 (in opset2 and later): YOLO v2's passthrough layer. OpenVINO reads the input's
elements as if laid out [N, C/s^2, H*s, W*s] and gathers each s x s block into channels, giving
[N, C*s^2, H/s, W/s]: a reshape and a transpose, bit-exact."""

import numpy as np

from irexec.ir.shape import Dimension, PartialShape
from irexec.ops.spec import ANY, Attr, Input, Op, OpSpec, Output, Rank, TensorType, register


def _divided(d: Dimension, s: int) -> Dimension:
    if d.is_static:
        return Dimension.static(d.min // s)
    return Dimension(-(-d.min // s), None if d.max is None else d.max // s)


@register
class ReorgYolo(Op):
    spec = OpSpec(
        type="ReorgYolo",
        since=2,
        attrs=(Attr("stride", "uint_list",
                    doc="the block side s (OpenVINO writes one value; the first is read), "
                        "positive"),),
        inputs=(Input("data", ANY, Rank(exact=4),
                      doc="[N, C, H, W]: C a multiple of s^2, H and W multiples of s"),),
        outputs=(Output("output", "[N, C*s^2, H/s, W/s]"),),
        doc="Moves each s x s block of (OpenVINO's reinterpretation of) the input into channels.",
        exact=True,
    )

    @staticmethod
    def infer(ctx):
        strides = ctx.attrs["stride"]
        if not strides or strides[0] < 1:
            ctx.error("IR302", f"stride is {list(strides)}; it must be a positive integer")
        s = strides[0]
        t = ctx.input_type(0)
        shape = t.shape
        if not shape.rank_is_static:
            return [t]
        c, h, w = shape[1], shape[2], shape[3]
        if c.is_static and (c.min < s * s or c.min % (s * s)):
            ctx.error("IR307", f"data has {c.min} channels; ReorgYolo needs a multiple of "
                               f"stride^2 = {s * s}")
        for name, d in (("H", h), ("W", w)):
            if d.is_static and d.min % s:
                ctx.error("IR307", f"data's {name} is {d.min}; it must be a multiple of the "
                                   f"stride {s}")
        out_c = Dimension.static(c.min * s * s) if c.is_static else \
            Dimension(c.min * s * s, None if c.max is None else c.max * s * s)
        out = PartialShape([shape[0], out_c, _divided(h, s), _divided(w, s)])
        return [TensorType(t.element_type, out)]

    @staticmethod
    def kernel(data, *, stride):
        s = stride[0]
        n, c, h, w = data.shape
        inner = c // (s * s)
        # data read as [N, C/s^2, H*s, W*s]: element (n, k, y*s + i, x*s + j) goes to channel
        # (i*s + j)*C/s^2 + k at (y, x) of an [N, C, H, W] buffer, which is the output's memory
        blocks = data.reshape(n, inner, h, s, w, s)
        out = np.ascontiguousarray(blocks.transpose(0, 3, 5, 1, 2, 4))
        return out.reshape(n, c * s * s, h // s, w // s)
