"""``PrePostProcessor`` and its parts, as OpenVINO's ``openvino.preprocess`` has them.

The steps are recorded as they are called and applied by ``build()``, in OpenVINO's order:
the user's tensor (element type, layout, shape, colour planes) becomes new Parameter layers
in place of the model's; the steps follow in the order given; then, implicitly, a conversion
to the model's element type and a transpose to the model's layout where they still differ.
Outputs likewise: the steps, then a conversion and a transpose to what ``tensor()`` asked.

NOTE for developers: the layers are made with irexec's own opset functions (``irexec.opset13``:
``convert``, ``transpose``, ``interpolate`` ...), under the names OpenVINO's API gives them,
so no op type is named here; each is inferred as it is made, and the model is inferred again
once all are in.
"""

from __future__ import annotations

import enum

import numpy as np

from irexec import opset1 as ops1
from irexec import opset13 as ops
from irexec.errors import IRError
from irexec.ir.element_type import ElementType
from irexec.ir.layout import Layout, axis_of, get_layout, permutation, permuted, set_layout
from irexec.ir.model import Model, Node, OutputPort
from irexec.ir.shape import Dimension, PartialShape
from irexec.opsets import graph


class PreprocessError(RuntimeError):
    """Pre- or post-processing that cannot be built (OpenVINO raises RuntimeError too)."""


class ColorFormat(enum.Enum):
    UNDEFINED = "UNDEFINED"
    NV12_SINGLE_PLANE = "NV12_SINGLE_PLANE"
    NV12_TWO_PLANES = "NV12_TWO_PLANES"
    I420_SINGLE_PLANE = "I420_SINGLE_PLANE"
    I420_THREE_PLANES = "I420_THREE_PLANES"
    RGB = "RGB"
    BGR = "BGR"
    GRAY = "GRAY"
    RGBX = "RGBX"
    BGRX = "BGRX"


class PaddingMode(enum.Enum):
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class ResizeAlgorithm(enum.Enum):
    RESIZE_LINEAR = "linear"
    RESIZE_CUBIC = "cubic"
    RESIZE_NEAREST = "nearest"
    RESIZE_BILINEAR_PILLOW = "bilinear_pillow"
    RESIZE_BICUBIC_PILLOW = "bicubic_pillow"


_YUV = {ColorFormat.NV12_SINGLE_PLANE, ColorFormat.NV12_TWO_PLANES,
        ColorFormat.I420_SINGLE_PLANE, ColorFormat.I420_THREE_PLANES}
_NHWC = Layout("NHWC")


def _half(d: Dimension) -> Dimension:
    return Dimension.static(d.min // 2) if d.is_static else Dimension.dynamic()


def _one_and_half(d: Dimension) -> Dimension:
    return Dimension.static(d.min * 3 // 2) if d.is_static else Dimension.dynamic()


_CHANNELS = {ColorFormat.RGB: 3, ColorFormat.BGR: 3, ColorFormat.RGBX: 4,
             ColorFormat.BGRX: 4, ColorFormat.GRAY: 1}


def _planes(color: ColorFormat, shape: PartialShape) -> list[PartialShape]:
    """The shapes of the colour format's planes for an NHWC image of ``shape``."""
    if color in _CHANNELS and shape.rank_is_static and len(shape) == 4:
        return [PartialShape([*shape.dims[:3], Dimension.static(_CHANNELS[color])])]
    if color not in _YUV:
        return [shape]
    if not shape.rank_is_static or len(shape) != 4:
        raise PreprocessError(f"a {color.name} input needs an NHWC shape of rank 4, not {shape}")
    n, h, w, _ = shape.dims
    one = Dimension.static(1)
    if color in (ColorFormat.NV12_SINGLE_PLANE, ColorFormat.I420_SINGLE_PLANE):
        return [PartialShape([n, _one_and_half(h), w, one])]
    if color == ColorFormat.NV12_TWO_PLANES:
        return [PartialShape([n, h, w, one]),
                PartialShape([n, _half(h), _half(w), Dimension.static(2)])]
    return [PartialShape([n, h, w, one]), PartialShape([n, _half(h), _half(w), one]),
            PartialShape([n, _half(h), _half(w), one])]


def _rank(port: OutputPort) -> int:
    shape = port.partial_shape
    if shape is None or not shape.rank_is_static:
        raise PreprocessError(f"this step needs a tensor of known rank; {port!r} has none")
    return len(shape)


def _axis(layout: Layout, name: str, port: OutputPort, what: str) -> int:
    index = axis_of(layout, name, _rank(port)) if not layout.empty else None
    if index is None:
        raise PreprocessError(f"{what} needs a layout with the '{name}' axis (set one with "
                              f"tensor().set_layout, e.g. 'NCHW'); the layout is "
                              f"{layout if not layout.empty else 'not set'}")
    return index


def _layout_port(node: Node):
    """Where a layout is kept, as OpenVINO keeps it: a Parameter's output port, a Result's
    input port (their rt_info)."""
    return node.outputs[0] if node.outputs else node.inputs[0]


def _layout_of(node: Node) -> Layout:
    """The layout a Parameter or Result has (empty if none)."""
    return get_layout(_layout_port(node))


def _set_layout(node: Node, layout: Layout) -> None:
    set_layout(_layout_port(node), layout)


class _Context:
    def __init__(self, layout: Layout, color: ColorFormat, target_layout: Layout,
                 model_shape: PartialShape | None, target_type: ElementType | None):
        self.layout = layout
        self.color = color
        self.target_layout = target_layout
        self.model_shape = model_shape
        self.target_type = target_type

    def model_dim(self, name: str) -> int:
        shape, layout = self.model_shape, self.target_layout
        index = axis_of(layout, name, len(shape)) if shape is not None \
            and shape.rank_is_static and not layout.empty else None
        if index is None or not shape.dims[index].is_static:
            raise PreprocessError(f"resize needs the model's {name} size: give the model's "
                                  f"layout (model().set_layout) and a static {name}, or the "
                                  f"size in resize(algorithm, height, width)")
        return shape.dims[index].min


# --- the steps shared by inputs and outputs ----------------------------------------------------

def _convert_type(nodes: list[OutputPort], ctx: _Context, et) -> list[OutputPort]:
    target = ctx.target_type if et is None else et
    if target is None:
        return nodes
    return [n if n.element_type == target else ops.convert(n, target).outputs[0] for n in nodes]


def _convert_layout(nodes: list[OutputPort], ctx: _Context, layout) -> list[OutputPort]:
    if len(nodes) != 1:
        raise PreprocessError("convert_layout cannot work on an image of several planes: "
                              "convert its colour first (convert_color)")
    node = nodes[0]
    if isinstance(layout, (list, tuple)):  # a transpose order
        order = [int(i) for i in layout]
        out = ops.transpose(node, np.array(order, np.int64)).outputs[0]
        ctx.layout = permuted(ctx.layout, order, len(order))
        return [out]
    target = ctx.target_layout if layout is None else layout
    if target.empty or ctx.layout.empty:
        if not target.empty:
            ctx.layout = target
        return nodes
    try:
        order = permutation(ctx.layout, target, _rank(node))
    except ValueError as e:
        raise PreprocessError(str(e)) from None
    ctx.layout = target
    if order is None:
        return nodes
    return [ops.transpose(node, np.array(order, np.int64)).outputs[0]]


def _custom(nodes: list[OutputPort], fn) -> list[OutputPort]:
    if len(nodes) != 1:
        raise PreprocessError("custom steps work on a one-plane image")
    out = fn(nodes[0])
    ports = graph.as_outputs(out, "custom", "the function's result")
    return ports[:1]


def _element_type(value, what: str) -> ElementType | None:
    return None if value is None else graph.element_type(value, what, "type")


def _layout_arg(value) -> Layout:
    try:
        return Layout(value)
    except (TypeError, ValueError) as e:
        raise PreprocessError(f"not a layout: {value!r} ({e})") from None


# --- inputs ----------------------------------------------------------------------------------

class InputTensorInfo:
    """What the user's tensor is: element type, layout, shape, colour format."""

    def __init__(self):
        self._type: ElementType | None = None
        self._layout: Layout | None = None
        self._shape: PartialShape | None = None
        self._spatial: tuple | str | None = None
        self._color = ColorFormat.UNDEFINED
        self._sub_names: list[str] = []

    def set_element_type(self, type) -> InputTensorInfo:
        self._type = _element_type(type, "set_element_type")
        return self

    def set_layout(self, layout) -> InputTensorInfo:
        self._layout = _layout_arg(layout)
        return self

    def set_shape(self, shape) -> InputTensorInfo:
        self._shape = graph._shape(shape, "set_shape", "shape")
        return self

    def set_spatial_static_shape(self, height: int, width: int) -> InputTensorInfo:
        self._spatial = (int(height), int(width))
        return self

    def set_spatial_dynamic_shape(self) -> InputTensorInfo:
        self._spatial = "dynamic"
        return self

    def set_color_format(self, format: ColorFormat, sub_names=()) -> InputTensorInfo:
        if not isinstance(format, ColorFormat):
            raise TypeError(f"set_color_format takes a ColorFormat, not {format!r}")
        self._color = format
        self._sub_names = [str(s) for s in sub_names]
        return self

    def set_memory_type(self, memory_type: str) -> InputTensorInfo:
        """Accepted for OpenVINO's scripts; irexec holds every tensor in host memory."""
        del memory_type
        return self

    def set_from(self, tensor) -> InputTensorInfo:
        """Element type and shape from an array (or a Tensor holding one)."""
        array = np.asarray(getattr(tensor, "data", tensor))
        self._type = graph.element_type(array.dtype, "set_from", "tensor")
        self._shape = PartialShape(array.shape)
        return self


class InputModelInfo:
    """What the model's input is: its layout."""

    def __init__(self):
        self._layout: Layout | None = None

    def set_layout(self, layout) -> InputModelInfo:
        self._layout = _layout_arg(layout)
        return self


class PreProcessSteps:
    """The steps from the user's tensor to the model's input, in the order called."""

    def __init__(self):
        self._actions: list = []  # (nodes, ctx) -> nodes
        self._last_layout: Layout | None = None  # the last convert_layout(Layout) given
        self._forward_orders: list[list[int]] = []  # transpose orders given after it
        self._all_orders: list[list[int]] = []  # every transpose order given

    def convert_element_type(self, type=None) -> PreProcessSteps:
        et = _element_type(type, "convert_element_type")
        self._actions.append(lambda nodes, ctx: _convert_type(nodes, ctx, et))
        return self

    def convert_layout(self, layout=None) -> PreProcessSteps:
        if isinstance(layout, (list, tuple)):
            order = [int(i) for i in layout]
            if not order:
                return self
            self._forward_orders.append(order)
            self._all_orders.append(order)
            self._actions.append(lambda nodes, ctx: _convert_layout(nodes, ctx, order))
            return self
        target = None if layout is None else _layout_arg(layout)
        self._last_layout, self._forward_orders = target, []
        self._actions.append(lambda nodes, ctx: _convert_layout(nodes, ctx, target))
        return self

    def convert_color(self, dst_format: ColorFormat) -> PreProcessSteps:
        if not isinstance(dst_format, ColorFormat):
            raise TypeError(f"convert_color takes a ColorFormat, not {dst_format!r}")
        self._actions.append(lambda nodes, ctx: self._color(nodes, ctx, dst_format))
        return self

    def resize(self, alg: ResizeAlgorithm, dst_height: int = -1, dst_width: int = -1) \
            -> PreProcessSteps:
        if not isinstance(alg, ResizeAlgorithm):
            raise TypeError(f"resize takes a ResizeAlgorithm, not {alg!r}")
        self._actions.append(lambda nodes, ctx: self._resize(nodes, ctx, alg, int(dst_height),
                                                             int(dst_width)))
        return self

    def mean(self, value) -> PreProcessSteps:
        values = [float(v) for v in np.ravel(value)]
        self._actions.append(lambda nodes, ctx: self._arith(nodes, ctx, values, ops.subtract,
                                                            "mean"))
        return self

    def scale(self, value) -> PreProcessSteps:
        values = [float(v) for v in np.ravel(value)]
        self._actions.append(lambda nodes, ctx: self._arith(nodes, ctx, values, ops.divide,
                                                            "scale"))
        return self

    def reverse_channels(self) -> PreProcessSteps:
        self._actions.append(lambda nodes, ctx: self._reverse(nodes, ctx))
        return self

    def crop(self, begin, end) -> PreProcessSteps:
        begin, end = [int(b) for b in begin], [int(e) for e in end]
        if len(begin) != len(end):
            raise PreprocessError(f"crop's begin and end have {len(begin)} and {len(end)} "
                                  f"coordinates; give both for every axis")

        def crop(nodes, ctx):
            one = self._one(nodes, "crop")
            return [ops.slice(one, np.array(begin, np.int32), np.array(end, np.int32),
                              np.ones(len(begin), np.int32)).outputs[0]]
        self._actions.append(crop)
        return self

    def pad(self, pads_begin, pads_end, value, mode: PaddingMode) -> PreProcessSteps:
        """Pad-1 with these pads (one number per axis) and, for CONSTANT, this value (one
        number, or a list of one)."""
        begin, end = [int(v) for v in pads_begin], [int(v) for v in pads_end]
        values = [float(v) for v in np.ravel(value)]
        if len(values) != 1:
            raise PreprocessError(f"pad takes one padding value, not {len(values)}")
        if not isinstance(mode, PaddingMode):
            raise TypeError(f"pad takes a PaddingMode, not {mode!r}")

        def pad(nodes, ctx):
            one = self._one(nodes, "pad")
            fill = np.array(values[0], one.element_type.dtype)
            return [ops1.pad(one, np.array(begin, np.int64), np.array(end, np.int64),
                             mode.value, fill if mode == PaddingMode.CONSTANT else None)
                    .outputs[0]]
        self._actions.append(pad)
        return self

    def custom(self, preprocess_cb) -> PreProcessSteps:
        self._actions.append(lambda nodes, ctx: _custom(nodes, preprocess_cb))
        return self

    # -- how the steps are made -------------------------------------------------------------

    @staticmethod
    def _one(nodes, what: str) -> OutputPort:
        if len(nodes) != 1:
            raise PreprocessError(f"{what} cannot work on an image of several planes: convert "
                                  f"its colour to RGB or BGR first (convert_color)")
        return nodes[0]

    def _arith(self, nodes, ctx, values, function, what):
        node = self._one(nodes, what)
        if node.element_type is None or not node.element_type.is_real:
            raise PreprocessError(f"{what} works on floating-point tensors; the tensor is "
                                  f"{node.element_type}: convert it first "
                                  f"(convert_element_type)")
        if len(values) == 1:
            shape = [1]
        else:
            rank = _rank(node)
            channels = _axis(ctx.layout, "C", node, f"{what} per channel")
            dim = node.partial_shape.dims[channels]
            if dim.is_static and dim.min != len(values):
                raise PreprocessError(f"{what} has {len(values)} values but the tensor has "
                                      f"{dim.min} channels (shape {node.partial_shape}, layout "
                                      f"{ctx.layout})")
            shape = [1] * rank
            shape[channels] = len(values)
        constant = np.array(values, np.float64).astype(node.element_type.dtype).reshape(shape)
        return [function(node, constant).outputs[0]]

    def _reverse(self, nodes, ctx):
        node = self._one(nodes, "reverse_channels")
        channels = _axis(ctx.layout, "C", node, "reverse_channels")
        dim = node.partial_shape.dims[channels]
        if not dim.is_static:
            raise PreprocessError("reverse_channels needs a static number of channels")
        order = np.arange(dim.min - 1, -1, -1, dtype=np.int32)
        return [ops.gather(node, order, np.int32(channels)).outputs[0]]

    def _resize(self, nodes, ctx, alg, height, width):
        node = self._one(nodes, "resize")
        h = _axis(ctx.layout, "H", node, "resize")
        w = _axis(ctx.layout, "W", node, "resize")
        height = ctx.model_dim("H") if height < 0 else height
        width = ctx.model_dim("W") if width < 0 else width
        out = ops.interpolate(node, np.array([height, width], np.int64), alg.value, "sizes",
                              pads_begin=[0, 0], pads_end=[0, 0],
                              axes=np.array([h, w], np.int64))
        return [out.outputs[0]]

    def _color(self, nodes, ctx, dst):
        src = ctx.color
        if src == dst:
            return nodes
        to_rgb = {ColorFormat.RGB: "rgb", ColorFormat.BGR: "bgr"}
        if src in _YUV and dst == ColorFormat.GRAY:  # the luma plane is the grey image
            ctx.color = dst
            if len(nodes) > 1:
                return nodes[:1]
            return [self._luma_rows(nodes[0])]
        if src in _YUV:
            if dst not in to_rgb:
                raise PreprocessError(f"{src.name} converts to RGB, BGR or GRAY, not "
                                      f"{dst.name}")
            family = "nv12" if src.name.startswith("NV12") else "i420"
            function = getattr(ops, f"{family}_to_{to_rgb[dst]}")
            ctx.color = dst
            if len(nodes) == 1:
                return [function(nodes[0]).outputs[0]]
            return [function(*nodes).outputs[0]]
        if src in to_rgb and dst in to_rgb:
            out = self._reverse(nodes, ctx)
            ctx.color = dst
            return out
        if src in to_rgb and dst == ColorFormat.GRAY:
            out = [self._gray(self._one(nodes, "convert_color"), ctx, src)]
            ctx.color = dst
            return out
        if src in (ColorFormat.RGBX, ColorFormat.BGRX) and dst in to_rgb:
            node = self._one(nodes, "convert_color")
            channels = _axis(ctx.layout, "C", node, "convert_color")
            out = [ops.slice(node, np.array([0], np.int32), np.array([-1], np.int32),
                             np.array([1], np.int32), np.array([channels], np.int32)).outputs[0]]
            if src.name[:3] != dst.name:
                out = self._reverse(out, ctx)
            ctx.color = dst
            return out
        raise PreprocessError(f"the colour format {src.name} does not convert to {dst.name} "
                              f"(NV12 and I420 convert to RGB, BGR and GRAY; RGB and BGR to "
                              f"each other and to GRAY; RGBX and BGRX to RGB and BGR)")

    @staticmethod
    def _luma_rows(node):
        """The Y rows of a one-plane NV12/I420 image (its first two thirds of rows)."""
        rows = ops.gather(ops.shape_of(node), np.array([1], np.int64), np.int64(0))
        stop = ops.divide(ops.multiply(rows, np.int64(2)), np.int64(3))
        return ops.slice(node, np.array([0], np.int64), stop, np.array([1], np.int64),
                         np.array([1], np.int64)).outputs[0]

    @staticmethod
    def _gray(node, ctx, src):
        """RGB or BGR to one grey channel with OpenCV's weights, as OpenVINO builds it: a 1x1
        convolution in f32 (integers rounded half to even and converted back)."""
        shape = node.partial_shape
        if not shape.rank_is_static or len(shape) != 4:
            raise PreprocessError(f"convert_color to GRAY needs an image of rank 4, not {shape}")
        channels = _axis(ctx.layout, "C", node, "convert_color to GRAY")
        et = node.element_type
        moved = channels == 3
        if moved:  # channels last: to N C ...
            node = ops.transpose(node, np.array([0, 3, 1, 2], np.int64)).outputs[0]
        if et.is_integral:
            node = ops.convert(node, "f32").outputs[0]
        weights = [0.299, 0.587, 0.114] if src == ColorFormat.RGB else [0.114, 0.587, 0.299]
        node = ops.convolution(node, np.array(weights, np.float32).reshape(1, 3, 1, 1),
                               [1, 1], [0, 0], [0, 0], [1, 1]).outputs[0]
        if et.is_integral:
            node = ops.convert(ops.round(node, "half_to_even"), et).outputs[0]
        if moved:
            node = ops.transpose(node, np.array([0, 2, 3, 1], np.int64)).outputs[0]
        return node

    def _model_layout(self, tensor_layout: Layout) -> Layout:
        """The model's layout where only the tensor's is known: the tensor's (or the last
        convert_layout's) with the transpose orders given after it."""
        layout = self._last_layout if self._last_layout is not None else tensor_layout
        for order in self._forward_orders:
            layout = permuted(layout, order, len(order))
        return layout

    def _param_shape(self, shape: PartialShape) -> PartialShape:
        """The tensor's shape that the transpose orders take to the model's ``shape``."""
        if not shape.rank_is_static:
            return shape
        dims = list(shape.dims)
        for order in reversed(self._all_orders):
            before = [Dimension.dynamic()] * len(dims)
            for i, j in enumerate(order):
                before[j] = dims[i]
            dims = before
        return PartialShape(dims)


class InputInfo:
    def __init__(self, parameter: Node):
        self._parameter = parameter
        self._tensor = InputTensorInfo()
        self._steps = PreProcessSteps()
        self._model = InputModelInfo()

    def tensor(self) -> InputTensorInfo:
        return self._tensor

    def preprocess(self) -> PreProcessSteps:
        return self._steps

    def model(self) -> InputModelInfo:
        return self._model

    def _build(self) -> list[Node]:
        """Make the new Parameter layers and the steps; the model's consumers of the old
        Parameter read the last step. Returns the new Parameters."""
        old, tensor, steps = self._parameter, self._tensor, self._steps
        port = old.outputs[0]
        model_shape, model_type = port.partial_shape, port.element_type
        tensor_type = tensor._type or model_type
        # Every colour format but UNDEFINED lays the tensor out NHWC unless told otherwise.
        tensor_layout = tensor._layout or (Layout(_NHWC) if tensor._color
                                           != ColorFormat.UNDEFINED else Layout())
        model_layout = self._model._layout or _layout_of(old)
        if model_layout.empty and tensor._layout is not None:
            model_layout = steps._model_layout(tensor_layout)
        shape = model_shape
        if not tensor_layout.empty and not model_layout.empty and tensor_layout != model_layout:
            try:
                order = permutation(model_layout, tensor_layout, len(model_shape))
            except ValueError as e:
                raise PreprocessError(str(e)) from None
            if order is not None:
                shape = PartialShape([model_shape.dims[i] for i in order])
        else:
            shape = steps._param_shape(model_shape)
            if tensor_layout.empty and not model_layout.empty and model_shape.rank_is_static:
                tensor_layout = model_layout
                for order in steps._all_orders:  # the layout before the orders
                    back = [0] * len(order)
                    for i, j in enumerate(order):
                        back[j] = i
                    tensor_layout = permuted(tensor_layout, back, len(order))
        if tensor._shape is not None:
            shape = tensor._shape
        elif tensor._spatial is not None:
            h = _axis(tensor_layout, "H", port, "set_spatial_*_shape")
            w = _axis(tensor_layout, "W", port, "set_spatial_*_shape")
            dims = list(shape.dims)
            if tensor._spatial == "dynamic":
                dims[h] = dims[w] = Dimension.dynamic()
            else:
                dims[h], dims[w] = (Dimension.static(v) for v in tensor._spatial)
            shape = PartialShape(dims)
        planes = _planes(tensor._color, shape)
        params = []
        for k, plane in enumerate(planes):
            if k < len(tensor._sub_names):
                suffix = "/" + tensor._sub_names[k]
                name = old.name + suffix
                names = [n + suffix for n in port.names]
            elif len(planes) == 1:
                name, names = old.name, list(port.names)
            else:
                name, names = None, []
            param = ops.parameter(plane, tensor_type, name=name)
            param.outputs[0].names = names
            param.rt_info = list(old.rt_info)
            param.outputs[0].rt_info = list(port.rt_info)
            _set_layout(param, tensor_layout)
            params.append(param)
        ctx = _Context(tensor_layout, tensor._color, model_layout, model_shape, model_type)
        nodes = [p.outputs[0] for p in params]
        for action in steps._actions:
            nodes = action(nodes, ctx)
        if len(nodes) != 1:
            raise PreprocessError(f"input '{old.name}' is given as {len(nodes)} planes of "
                                  f"{tensor._color.name}: add convert_color(ColorFormat.RGB) "
                                  f"(or BGR)")
        if ctx.color not in (ColorFormat.RGB, ColorFormat.BGR, ColorFormat.GRAY,
                             ColorFormat.UNDEFINED):
            raise PreprocessError(f"the model takes RGB, BGR or GRAY images: convert "
                                  f"{ctx.color.name} with convert_color")
        nodes = _convert_type(nodes, ctx, None)
        if not ctx.target_layout.empty and ctx.target_layout != ctx.layout:
            nodes = _convert_layout(nodes, ctx, None)
        last = nodes[0]
        if not _compatible(last.partial_shape, model_shape):
            raise PreprocessError(f"after preprocessing, input '{old.name}' has the shape "
                                  f"{last.partial_shape}; the model takes {model_shape}")
        for consumer in list(port.consumers):
            consumer.source = last
            consumer.declared = None  # what a file declared there described the old input
            last.consumers.append(consumer)
        port.consumers.clear()
        return params


def _compatible(a: PartialShape | None, b: PartialShape | None) -> bool:
    """Whether some shape fits both (each dim's intervals meet)."""
    if a is None or b is None or not a.rank_is_static or not b.rank_is_static:
        return True
    if len(a) != len(b):
        return False
    for x, y in zip(a.dims, b.dims):
        highs = [v for v in (x.max, y.max) if v is not None]
        if highs and max(x.min, y.min) > min(highs):
            return False
    return True


# --- outputs ---------------------------------------------------------------------------------

class OutputTensorInfo:
    def __init__(self):
        self._type: ElementType | None = None
        self._layout: Layout | None = None

    def set_element_type(self, type) -> OutputTensorInfo:
        self._type = _element_type(type, "set_element_type")
        return self

    def set_layout(self, layout) -> OutputTensorInfo:
        self._layout = _layout_arg(layout)
        return self


class OutputModelInfo:
    def __init__(self):
        self._layout: Layout | None = None

    def set_layout(self, layout) -> OutputModelInfo:
        self._layout = _layout_arg(layout)
        return self

    def set_color_format(self, format: ColorFormat, sub_names=()) -> OutputModelInfo:
        """Accepted: the colour of the model's output matters only to steps irexec lacks."""
        del format, sub_names
        return self


class PostProcessSteps:
    def __init__(self):
        self._actions: list = []

    def convert_element_type(self, type=None) -> PostProcessSteps:
        et = _element_type(type, "convert_element_type")
        self._actions.append(lambda nodes, ctx: _convert_type(nodes, ctx, et))
        return self

    def convert_layout(self, layout=None) -> PostProcessSteps:
        target = layout if isinstance(layout, (list, tuple)) or layout is None \
            else _layout_arg(layout)
        self._actions.append(lambda nodes, ctx: _convert_layout(nodes, ctx, target))
        return self

    def custom(self, postprocess_cb) -> PostProcessSteps:
        self._actions.append(lambda nodes, ctx: _custom(nodes, postprocess_cb))
        return self


class OutputInfo:
    def __init__(self, result: Node):
        self._result = result
        self._tensor = OutputTensorInfo()
        self._steps = PostProcessSteps()
        self._model = OutputModelInfo()

    def tensor(self) -> OutputTensorInfo:
        return self._tensor

    def postprocess(self) -> PostProcessSteps:
        return self._steps

    def model(self) -> OutputModelInfo:
        return self._model

    def _build(self) -> None:
        result = self._result
        if self._model._layout is not None:
            _set_layout(result, self._model._layout)
        layout = _layout_of(result)
        source = result.inputs[0].source
        ctx = _Context(layout, ColorFormat.UNDEFINED,
                       self._tensor._layout or Layout(), None, self._tensor._type)
        nodes = [source]
        for action in self._steps._actions:
            nodes = action(nodes, ctx)
        last = nodes[0]
        if self._tensor._type is not None and last.element_type != self._tensor._type:
            last = _convert_type([last], ctx, None)[0]
        if not ctx.target_layout.empty and ctx.target_layout != ctx.layout:
            last = _convert_layout([last], ctx, None)[0]
        if last is source:
            return
        # The output keeps its names: they move to the port that now feeds the Result.
        last.names, source.names = list(source.names), []
        last.node.name = source.node.name + f".{source.index}"
        port = result.inputs[0]
        source.consumers.remove(port)
        port.source = last
        port.declared = None  # a file's dims there described the output before the steps
        last.consumers.append(port)
        if not ctx.layout.empty:
            _set_layout(result, ctx.layout)


# --- the whole ---------------------------------------------------------------------------------

def _snapshot(model: Model) -> list:
    """What building changes in the model's own layers: who reads each output port, what feeds
    each input port, the ports' names and rt_info, the layers' names."""
    saved = []
    for node in model.nodes:
        saved.append((node, node.name))
        for port in node.outputs:
            saved.append((port, list(port.consumers), list(port.names), list(port.rt_info)))
        for port in node.inputs:
            saved.append((port, port.source, port.declared, list(port.rt_info)))
    return saved


def _restore(saved: list) -> None:
    for item in saved:
        if isinstance(item[0], Node):
            item[0].name = item[1]
        elif isinstance(item[0], OutputPort):
            item[0].consumers[:], item[0].names[:], item[0].rt_info[:] = item[1:]
        else:
            item[0].source, item[0].declared, item[0].rt_info[:] = item[1:]


class PrePostProcessor:
    """Pre- and post-processing of a model, built into it as layers by ``build()``."""

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            raise TypeError(f"PrePostProcessor takes an irexec Model, not "
                            f"{type(model).__name__}")
        self._model = model
        self._inputs: dict[int, InputInfo] = {}
        self._outputs: dict[int, OutputInfo] = {}

    def input(self, key=None) -> InputInfo:
        port = self._model.input(key)
        info = self._inputs.get(id(port.node))
        if info is None:
            info = self._inputs[id(port.node)] = InputInfo(port.node)
        return info

    def output(self, key=None) -> OutputInfo:
        port = self._model.output(key)
        index = next(i for i, p in enumerate(self._model.outputs) if p is port) \
            if not isinstance(key, (int, np.integer)) else int(key)
        result = self._model.results[index]
        info = self._outputs.get(id(result))
        if info is None:
            info = self._outputs[id(result)] = OutputInfo(result)
        return info

    def build(self) -> Model:
        """Put the steps into the model (it is changed, as OpenVINO changes it) and return it,
        inferred again. PreprocessError (or IRError) if the steps do not fit the model."""
        model = self._model
        replaced: dict[int, list[Node]] = {}
        saved = _snapshot(model)
        try:
            for info in self._inputs.values():
                replaced[id(info._parameter)] = info._build()
            for info in self._outputs.values():
                info._build()
        except IRError as e:
            _restore(saved)
            raise PreprocessError(f"preprocessing does not fit the model: {e}") from None
        except Exception:
            _restore(saved)  # the model stays as it was
            raise
        parameters = []
        for p in model.parameters:
            parameters.extend(replaced.get(id(p), [p]))
        roots = [n for n in model.nodes if n.op is None or n.op.spec.role not in (
            "parameter", "result")]
        nodes = graph.ordered_layers(parameters, roots, model.results)
        model.replace_layers(nodes)
        errors = [d for d in Model.reinfer(model) if d.is_error]
        if errors:
            raise IRError(errors)
        return model

    def __str__(self) -> str:
        lines = []
        for info in self._inputs.values():
            lines.append(f"Input '{info._parameter.name}': {len(info._steps._actions)} step(s)")
        for info in self._outputs.values():
            lines.append(f"Output '{info._result.name}': {len(info._steps._actions)} step(s)")
        return "\n".join(lines)
