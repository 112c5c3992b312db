"""PriorBox-1, PriorBox-8 and PriorBoxClustered-1: the prior (anchor) boxes of SSD-style
detectors for a grid of output_size points over an image of image_size, in f32.

The output's length depends on the values of output_size (usually a Constant or ShapeOf of a
feature map): inference reads them, or their bounds, as Reshape reads its target shape."""

from __future__ import annotations

from dataclasses import dataclass

from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import product
from irexec.kernels import priors
from irexec.errors import OpError
from irexec.ops.domains import Domain, as_int64
from irexec.ops.spec import (INTEGER, VECTOR, Attr, Input, Op, OpSpec, Output, TensorType,
                             register)
from irexec.ir.element_type import ElementType

@dataclass(frozen=True)
class Sizes(Domain):
    """Two sizes, each at least ``low`` (checked); generated in [max(low, 1), high]."""

    of: int = 0
    name: str = "output_size"
    low: int = 0
    high: int = 4

    def check(self, values, data_shape, attrs) -> None:
        v = as_int64(values)
        if v.size == 2 and (v < self.low).any():
            raise OpError(f"{self.name} is {v.tolist()}; its sizes must be at least {self.low}",
                          code="IR308")

    def generate(self, rng, data_shape, attrs, declared, unsigned):
        return rng.integers(max(self.low, 1), self.high + 1, size=2)


GRID = Sizes(0, "output_size", 0, 4)
IMAGE = Sizes(1, "image_size", 1, 64)
INPUTS = (
    Input("output_size", INTEGER, VECTOR, domain=GRID,
          doc="[height, width] of the grid of box centres, each at least 0"),
    Input("image_size", INTEGER, VECTOR, domain=IMAGE,
          doc="[image_height, image_width] the boxes are normalized by, each at least 1"),
)
OUTPUT = (Output("output", "[2, 4*height*width*priors_per_point]: the boxes' [xmin, ymin, "
                           "xmax, ymax], then their variances", type="f32"),)
VARIANCE = Attr("variance", "float_list", default=(),
                doc="0 values (0.1 for all), 1 (for all) or 4 (one per coordinate)")
OFFSET = Attr("offset", "float", doc="where in its cell a box's centre lies (usually 0.5)")
CLIP = "clip each coordinate to [0, 1]"

PRIOR_BOX_ATTRS = (
    Attr("min_size", "float_list", default=(), doc="box sizes in pixels"),
    Attr("max_size", "float_list", default=(),
         doc="with min_size[i]: a square box of side sqrt(min_size[i]*max_size[i])"),
    Attr("aspect_ratio", "float_list", default=(),
         doc="width/height ratios besides 1 (repeats ignored)"),
    Attr("density", "float_list", default=(),
         doc="with fixed_size: a density x density grid of boxes per fixed size, each >= 1"),
    Attr("fixed_ratio", "float_list", default=(),
         doc="with fixed_size: the aspect ratios used instead of aspect_ratio"),
    Attr("fixed_size", "float_list", default=(),
         doc="box sizes in pixels, each with its density"),
    Attr("clip", "bool", default=False, doc=CLIP),
    Attr("flip", "bool", default=False, doc="add 1/r for each aspect ratio r"),
    Attr("step", "float", default=0.0,
         doc="distance between box centres in pixels; 0: the image size over the grid size"),
    OFFSET,
    VARIANCE,
    Attr("scale_all_sizes", "bool", default=True,
         doc="false: sizes and step are fractions of the image height, max_size boxes follow "
             "the last min_size only (MXNet's PriorBox)"),
)
ORDER = Attr("min_max_aspect_ratios_order", "bool", default=True,
             doc="true: per min_size the [min, max, aspect ratios] boxes (Caffe's order); "
                 "false: [min, aspect ratios, max]")


def _check_variance(ctx, name: str):
    if len(ctx.attrs[name]) not in (0, 1, 4):
        ctx.error("IR302", f"{name} has {len(ctx.attrs[name])} values; give 0, 1 or 4")


def _check_sizes(ctx):
    """Both inputs hold 2 values."""
    for i in (0, 1):
        shape = ctx.input_shape(i)
        if shape.rank_is_static and not shape[0].contains(2):
            ctx.error("IR307", f"input {i} ({ctx.spec.inputs[i].name}) has shape {shape}; it "
                               f"holds two values, [height, width]")


def _output_shape(ctx, per_point: int) -> PartialShape:
    """[2, 4*H*W*per_point] from the values (or bounds) of output_size."""
    grid = ctx.input_as_shape(0)
    if grid is None or len(grid) != 2:
        return PartialShape([2, Dimension.dynamic()])
    return PartialShape([Dimension.static(2), product([*grid, Dimension.static(4 * per_point)])])


def _grid_values(ctx) -> None:
    """Known sizes below their limits are errors (at run time too: the inputs have domains)."""
    for i, domain in ((0, GRID), (1, IMAGE)):
        values = ctx.input_value(i)
        if values is not None:
            domain.check(values, (), ctx.attrs)


def _prior_box_infer(ctx) -> list[TensorType]:
    a = ctx.attrs
    _check_variance(ctx, "variance")
    if a["fixed_size"] and len(a["density"]) < len(a["fixed_size"]):
        ctx.error("IR302", f"fixed_size has {len(a['fixed_size'])} values but density "
                           f"{len(a['density'])}; give one density per fixed size")
    bad = [d for d in a["density"] if not d >= 1]
    if bad:
        ctx.error("IR302", f"density {bad[0]} is below 1; each density is a count of boxes "
                           f"along a side")
    bad = [v for v in (*a["min_size"], *a["max_size"], *a["aspect_ratio"], *a["fixed_size"],
                       *a["fixed_ratio"]) if not v > 0]
    if bad:
        ctx.error("IR302", f"{bad[0]} is not positive; sizes and ratios must be")
    _check_sizes(ctx)
    _grid_values(ctx)
    declared = priors.number_of_priors(a)
    built = len(priors._templates(a, 1, 0.0))
    if built != declared:
        ctx.error("IR302", f"these attributes give {built} boxes per point but OpenVINO sizes "
                           f"the output for {declared} (min_size with fixed_size, more max_size "
                           f"than min_size values, or fixed_ratio beside aspect_ratio); its "
                           f"kernels write past the output then")
    return [TensorType(ElementType.f32, _output_shape(ctx, declared))]


def _refuses_dynamic_grid(node) -> str | None:
    """OpenVINO's CPU plugin compiles PriorBox-8 with min_max_aspect_ratios_order false only
    when its grid is known before running (its shape inference takes PriorBox-1 alone, and
    only the other order converts to it)."""
    if node.attrs.get("min_max_aspect_ratios_order", True):
        return None
    port = node.outputs[0] if node.outputs else None
    shape = port.partial_shape if port is not None else None
    if shape is not None and not shape.is_static:
        return ("OpenVINO's CPU plugin refuses PriorBox-8 with min_max_aspect_ratios_order "
                "false whose output_size is not known before running (docs/compatibility.md)")
    return None


@register
class PriorBox1(Op):
    spec = OpSpec(
        type="PriorBox",
        numerics="rounded",
        since=1,
        until=7,
        attrs=PRIOR_BOX_ATTRS,
        inputs=INPUTS,
        outputs=OUTPUT,
        doc="Prior boxes of given sizes and aspect ratios around every grid point "
            "([min, max, aspect ratios] order).",
    )
    infer = staticmethod(_prior_box_infer)

    @staticmethod
    def kernel(output_size, image_size, **attrs):
        return priors.prior_box(output_size, image_size, attrs, priors.number_of_priors(attrs))


@register
class PriorBox8(Op):
    spec = OpSpec(
        type="PriorBox",
        numerics="rounded",
        since=8,
        attrs=(*PRIOR_BOX_ATTRS, ORDER),
        inputs=INPUTS,
        outputs=OUTPUT,
        doc="Prior boxes of given sizes and aspect ratios around every grid point, in either "
            "order.",
    )
    infer = staticmethod(_prior_box_infer)
    openvino_refuses = staticmethod(_refuses_dynamic_grid)

    @staticmethod
    def kernel(output_size, image_size, **attrs):
        return priors.prior_box(output_size, image_size, attrs, priors.number_of_priors(attrs))


@register
class PriorBoxClustered(Op):
    spec = OpSpec(
        type="PriorBoxClustered",
        numerics="rounded",
        since=1,
        attrs=(
            Attr("width", "float_list", default=(), doc="the boxes' widths in pixels"),
            Attr("height", "float_list", default=(),
                 doc="the boxes' heights in pixels, one per width"),
            Attr("clip", "bool", default=True, doc=CLIP),
            Attr("step", "float", default=0.0, doc="distance between box centres in pixels"),
            Attr("step_w", "float", default=0.0, doc="horizontal distance; 0: step"),
            Attr("step_h", "float", default=0.0, doc="vertical distance; 0: step"),
            OFFSET,
            VARIANCE,
        ),
        inputs=INPUTS,
        outputs=OUTPUT,
        doc="Prior boxes of the listed widths and heights around every grid point (when every "
            "step is 0, the image size over the grid size).",
    )

    @staticmethod
    def infer(ctx):
        a = ctx.attrs
        _check_variance(ctx, "variance")
        if len(a["width"]) != len(a["height"]):
            ctx.error("IR302", f"width has {len(a['width'])} values but height "
                               f"{len(a['height'])}; give one height per width")
        _check_sizes(ctx)
        _grid_values(ctx)
        return [TensorType(ElementType.f32, _output_shape(ctx, len(a["width"])))]

    @staticmethod
    def kernel(output_size, image_size, **attrs):
        return priors.prior_box_clustered(output_size, image_size, attrs)
