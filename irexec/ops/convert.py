"""Convert-1: change a tensor's element type."""

import numpy as np

from irexec.ops.registry import register
from irexec.ops.spec import ANY, Attr, Input, Op, OpSpec, Output, TensorType


def convert(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Element-wise conversion with OpenVINO's rules (see docs/compatibility.md, Convert).

    * to boolean: nonzero (and NaN) is true;
    * float to integer: truncation toward zero; NaN gives 0; values beyond the target's range
      saturate to its minimum or maximum;
    * integer to a narrower integer: two's-complement wrap-around (numpy's cast);
    * everything else: numpy's cast, which rounds to nearest even.
    """
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return x != 0
    if x.dtype.kind == "f" or x.dtype.kind == "V" or x.dtype == np.dtype("bfloat16"):
        if dtype.kind in "iu":
            return _float_to_int(x, dtype)
    return x.astype(dtype)


def _float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    wide = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.trunc(wide).astype(dtype)
    # float(info.max) may round up past the maximum (2**63 for i64): compare in float64.
    out[wide >= float(info.max)] = info.max
    out[wide <= float(info.min)] = info.min
    out[np.isnan(wide)] = 0
    return out


@register
class Convert(Op):
    spec = OpSpec(
        type="Convert",
        since=1,
        attrs=(Attr("destination_type", "element_type", doc="the element type to convert to"),),
        inputs=(Input("data", ANY, doc="the tensor to convert"),),
        outputs=(Output("output", "the same values in destination_type; same shape"),),
        doc="Converts every element to another element type.",
    )

    @staticmethod
    def infer(ctx):
        return [TensorType(ctx.attrs["destination_type"], ctx.input_type(0).shape)]

    @staticmethod
    def kernel(data, *, destination_type):
        return convert(data, destination_type.dtype)
