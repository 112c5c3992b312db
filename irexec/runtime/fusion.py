"""Patterns the plan computes as one piece rather than layer by layer.

NOTE for developers: this is the one place outside the ops' own files that names op types (the
house rule, docs/ARCHITECTURE.md). Each pattern is a small table of layer types with a function
that finds it and one that computes it, and each has its own test (tests/runtime/test_fusion.py
for weight decompression, tests/runtime/test_fusion_patterns.py for the fused steps below).

Two kinds of pattern live here: weight decompression (a constant computed once, as OpenVINO's
plugins compute it; first part) and fused steps (several layers run as one step of the plan,
computing exactly what the layers compute; second part).

Weight decompression
--------------------
A compressed model (NNCF's ``compress_weights``, optimum-intel's int4/int8 exports, an f8 or f16
model) keeps a weight as a narrow constant and writes its decompression as layers::

    Const(u8|i8|u4|i4|u3|u2|nf4|f4e2m1|f8e4m3|f8e5m2|f16) -> Convert(to f16|bf16|f32)
        (or a codebook: Gather(Convert(Const f8 values), Const indices), NNCF's CB4)
      -> [Subtract a zero point: any constant subgraph, e.g. Const -> Convert]
      -> Multiply by a scale (any constant subgraph: a Const, Const -> Convert, or NVFP4's
         f8 scale times an f32 one; either operand)
      -> [Reshape of the groups to the weight's shape]
      -> [Convert to the consumer's type]
      -> MatMul | Gather | Convolution | GroupConvolution

The scale's and the zero point's own subgraphs are folded as the IR says (OpenVINO folds them
as constants too); what changes is the Subtract and the Multiply.

Read literally, with an f16 scale, the Subtract and the Multiply are f16 layers and their results
are rounded to f16. OpenVINO's plugins do not run them so: they fuse the pattern into the
consuming layer and widen the codes, zero point and scale to f32, computing ``(w - zp) * scale``
in f32 with no rounding in between; the consumer reads that f32 weight. NNCF writes the pattern
for exactly that execution. The plan does the same by default (``"decompression": "fused"``):
the pattern's last layer gets the f32 value once per compiled model (the layers inside it are not
computed at all), or, with ``"per-call"`` (or when the f32 weights of all patterns would pass the
memory budget), on every call from the compressed constants, so that only the compressed ones
stay in memory between calls. ``"ir"`` computes every layer as its types say (the IR-literal
reading, docs/numerics.md).

One exception, measured on the CPU plugin: an nf4 table read only by Gathers (an embedding) has
its codebook values rounded to the first Convert's type (f16) before the f32 product, as the
plugin computes it there; feeding a MatMul the codebook stays exact in f32.

Where the pattern's last layer is not f32 (an f16 model without the final Convert), its consumer
computes in that type: the f32 product is rounded once to it.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from dataclasses import dataclass

import numpy as np

from irexec import budget
from irexec.errors import IRError, OpError
from irexec.ir import element_type as et_table
from irexec.ir.model import Node, OutputPort
from irexec.kernels import growing, numeric
from irexec.kernels.convert import convert
from irexec.kernels.fused import FusedKernel, Layer, checked_pending, ran

MODES = ("fused", "per-call", "ir")  # config "decompression"; the first is the default

# The pattern's layer types (the table; nothing else here names an op type).
CONSTANT = "Constant"
CONVERT = "Convert"
SUBTRACT = "Subtract"
MULTIPLY = "Multiply"
RESHAPE = "Reshape"
CODEBOOK = "Gather"  # a codebook's values read by the codes (NNCF's CB4)
CONSUMERS = frozenset({"MatMul", "Gather", "Convolution", "GroupConvolution"})
# The element types a compressed weight is stored in, and the float types it is widened to.
COMPRESSED = frozenset({"u8", "i8", "u4", "i4", "u3", "u2", "u1", "u6", "nf4", "f4e2m1",
                        "f8e4m3", "f8e5m2", "f16", "bf16"})
WIDENED = frozenset({"f16", "bf16", "f32"})
# Codes the CPU plugin rounds to the first Convert's type when only these layers read the weight.
ROUNDED_FOR_GATHER = frozenset({"nf4"})
GATHER_ONLY = frozenset({"Gather"})

_F32 = et_table.from_name("f32")


def mode_of(config) -> str:
    """The decompression mode a compile config asks for; ValueError naming what is wrong."""
    value = str((config or {}).get("decompression", MODES[0])).lower()
    if value not in MODES:
        raise ValueError(f"config 'decompression' is {value!r}; it takes "
                         f"{', '.join(repr(m) for m in MODES)}")
    return value


@dataclass(frozen=True)
class Decompression:
    """One weight-decompression pattern found in a model. Its inputs are ports whose values
    the plan knows when compiling: the compressed Const (or a codebook's Gather), the scale and
    the zero point (each a Const or a constant subgraph, folded as the IR says)."""

    root: OutputPort  # the port its consumers read: the pattern's last layer's output
    weights: OutputPort
    zero_point: OutputPort | None
    scale: OutputPort
    layers: tuple[Node, ...]  # the pattern's own layers (not its inputs'), producers first
    # The type the codes are rounded to first (the first Convert's), or None: kept exact in f32.
    codes_type: object = None

    @property
    def leaves(self) -> tuple[OutputPort, ...]:
        """The ports the value is computed from, in the order ``compute`` takes them."""
        return (self.weights, self.scale) if self.zero_point is None else \
            (self.weights, self.scale, self.zero_point)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.root.partial_shape.to_shape(), dtype=np.int64)) * 4

    def compute(self, weights: np.ndarray, scale: np.ndarray,
                zero_point: np.ndarray | None = None, read_only: bool = True) -> np.ndarray:
        """The weight as OpenVINO's plugins compute it: everything widened to f32, ``(w - zp) *
        scale`` in f32, reshaped to the pattern's shape; rounded once to the last layer's
        element type where that is not f32. Read-only (a constant of the plan) unless asked."""
        if self.codes_type is not None:
            weights = convert(weights, self.codes_type)
        w = _widened(weights)
        if zero_point is not None:
            w = np.subtract(w, _widened(zero_point), dtype=np.float32)
        w = np.multiply(w, _widened(scale), dtype=np.float32)
        w = w.reshape(self.root.partial_shape.to_shape())
        et = self.root.element_type
        if et != _F32:
            w = convert(w, et)
        if read_only:
            w.setflags(write=False)
        return w

    def __call__(self, *arrays):
        """A plan step's kernel (per-call mode, traces): a fresh array the run may reuse."""
        return self.compute(*arrays, read_only=False)


def _widened(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype == np.float32:
        return array
    return convert(array, _F32)


def decompressions(nodes) -> dict[OutputPort, Decompression]:
    """Every weight-decompression pattern feeding a consumer among ``nodes``, by its root port."""
    found: dict[OutputPort, Decompression] = {}
    for node in nodes:
        if node.type not in CONSUMERS:
            continue
        for port in node.inputs:
            source = port.source
            if source is not None and source not in found:
                match = _match(source)
                if match is not None:
                    found[source] = match
    return found


def inside(patterns) -> set[int]:
    """The ids of the layers inside the patterns (their Consts and roots excepted) whose every
    output is read only by the pattern's own layers: nothing but the pattern needs them."""
    ids: set[int] = set()
    for d in patterns:
        unread = {d.root.node.id}  # the root, and the layers only it (or they) read
        for n in reversed(d.layers[:-1]):  # the last layer is the root
            if all(c.node.id in unread for p in n.outputs for c in p.consumers):
                unread.add(n.id)
        ids |= unread - {d.root.node.id}
    return ids


def _type(port: OutputPort | None):
    return None if port is None or port.element_type is None else port.element_type.name


def _static(port: OutputPort) -> bool:
    return port.partial_shape is not None and port.partial_shape.is_static


def _constant(port: OutputPort, depth: int = 0) -> bool:
    """Whether the plan folds this port into a constant: a Const, or a layer that folds whose
    inputs are all constant (as runtime/plan.py decides)."""
    node = port.node
    if node.op is None:
        return False
    spec = node.op.spec
    if spec.role == "constant":
        return True
    if depth > 16 or spec.role is not None or not spec.folds or node.bodies \
            or node.op.kernel is None or not node.inputs:
        return False
    return all(p.source is not None and _constant(p.source, depth + 1) for p in node.inputs)


def _compressed(port: OutputPort):
    """The codes of a weight: Convert(compressed Const) to a float type (the Const's port and
    the Convert), or a codebook read by indices (Gather of constants, NNCF's CB4: the Gather's
    port, folded as the IR says)."""
    node = port.node
    if node.type == CONVERT and _type(port) in WIDENED:
        source = node.inputs[0].source
        if source is not None and source.node.type == CONSTANT \
                and _type(source) in COMPRESSED and _type(source) != _type(port):
            return source, [node]
        return None
    if node.type == CODEBOOK and _type(port) in WIDENED and _constant(port):
        return port, []
    return None


def _numpy_broadcast(node: Node) -> bool:
    return str(node.attrs.get("auto_broadcast", "numpy")).lower() == "numpy"


def _weights_side(port: OutputPort):
    """The codes (and zero point) of a Multiply's weight operand: the codes, possibly minus a
    zero point (a constant of a float type)."""
    node = port.node
    if node.type == SUBTRACT and _numpy_broadcast(node):
        codes, zp = node.inputs[0].source, node.inputs[1].source
        if codes is None or zp is None or codes.partial_shape != port.partial_shape:
            return None
        w = _compressed(codes)
        if w is None or _type(zp) not in WIDENED or not _constant(zp):
            return None
        return w[0], zp, w[1] + [node]
    w = _compressed(port)
    return None if w is None else (w[0], None, w[1])


def _match(root: OutputPort) -> Decompression | None:
    if not _static(root) or _type(root) not in WIDENED:
        return None
    port, tail = root, []
    if port.node.type == CONVERT:  # the last Convert, to the consumer's type
        tail.insert(0, port.node)
        port = port.node.inputs[0].source
    if port is not None and port.node.type == RESHAPE:  # groups back to the weight's shape
        shape = port.node.inputs[1].source if len(port.node.inputs) > 1 else None
        if shape is None or not _constant(shape):
            return None
        tail.insert(0, port.node)
        port = port.node.inputs[0].source
    if port is None or port.node.type != MULTIPLY or not _numpy_broadcast(port.node) \
            or _type(port) not in WIDENED or not _static(port):
        return None
    multiply = port.node
    a, b = (p.source for p in multiply.inputs)
    for weight_port, scale_port in ((a, b), (b, a)):
        if weight_port is None or scale_port is None:
            continue
        if weight_port.partial_shape != port.partial_shape:
            continue  # the scale broadcasts onto the weight, never the other way
        side = _weights_side(weight_port)
        if side is None or _type(scale_port) not in WIDENED or not _constant(scale_port):
            continue
        weights, zero_point, layers = side
        codes_type = None
        if _type(weights) in ROUNDED_FOR_GATHER and root.consumers and all(
                c.node.type in GATHER_ONLY for c in root.consumers):
            codes_type = layers[0].outputs[0].element_type
        return Decompression(root, weights, zero_point, scale_port,
                             tuple(layers + [multiply] + tail), codes_type)
    return None


# === Fused steps: several layers run as one step =================================================
#
# Converters write LayerNorm, RMSNorm, GELU, Swish, HSwish and attention as chains of small
# layers, and a bias and an activation as layers of their own after a MatMul or a Convolution.
# OpenVINO fuses them; the plan does too (config ``"fusion": "on"``, the default): each pattern
# found below becomes one step whose kernel (irexec/kernels/fused.py) runs the pattern's layers'
# own kernels in order, so the results are the unfused plan's bit for bit. What goes is the run
# loop's work per layer and a fresh array per layer (docs/performance.md). A pattern is fused
# only where every value inside it is read by the pattern alone (no other layer, no Result):
# what is computed inside a fused step is seen by no one else. Traces run the unfused plan
# (``Plan.traced``), so ``--trace`` and ``compare`` still see every layer; precise mode does not
# fuse (each layer is widened to float64 on its own).

FUSION_MODES = ("on", "off")  # config "fusion"; the first is the default


def fusion_of(config) -> str:
    """The fusion mode a compile config asks for (``True``/``False`` or ``"on"``/``"off"``);
    ValueError naming what is wrong."""
    value = (config or {}).get("fusion", FUSION_MODES[0])
    if value is True or value is False:
        return "on" if value else "off"
    text = str(value).lower()
    if text not in FUSION_MODES:
        raise ValueError(f"config 'fusion' is {value!r}; it takes 'on' or 'off' (or True, "
                         f"False)")
    return text


# --- the tables ---------------------------------------------------------------------------------
#
# A pattern is a list of layers, each ``(label, types, inputs)``: ``inputs`` name where each input
# comes from -- the label of an earlier layer of the pattern (its output), or any other name for
# a value from outside the pattern (the same name twice: the same value). A layer of a type in
# COMMUTATIVE may have its two inputs either way round. Alternatives are written as lists of
# pieces whose every combination is a pattern (``_variants``); longer ones are tried first.

ADD, SUBTRACT_T, MULTIPLY_T, DIVIDE, POWER = "Add", "Subtract", "Multiply", "Divide", "Power"
REDUCE_MEAN, SQRT, ERF, TANH, SIGMOID = "ReduceMean", "Sqrt", "Erf", "Tanh", "Sigmoid"
CLAMP, RELU, MINIMUM, SELECT = "Clamp", "Relu", "Minimum", "Select"
SOFTMAX, MATMUL = "Softmax", "MatMul"
SLICE, CONCAT_T = "Slice", "Concat"
COMMUTATIVE = frozenset({ADD, MULTIPLY_T, "Maximum", "Minimum"})

# Element-wise layers: one output of their inputs' broadcast shape, each element computed from
# the elements at its place. An epilogue chain (a layer, then element-wise layers each reading
# the value before it) becomes one step.
ELEMENTWISE = frozenset({
    "Add", "Subtract", "Multiply", "Divide", "Power", "Maximum", "Minimum", "SquaredDifference",
    "Relu", "Sigmoid", "Tanh", "Swish", "HSwish", "HSigmoid", "Mish", "SoftPlus", "SoftSign",
    "Gelu", "Elu", "Exp", "Log", "Sqrt", "Abs", "Negative", "Erf", "Clamp", "PRelu", "Selu",
    "Floor", "Ceiling", "Select"})
# Layers whose kernel always returns memory of its own (never a view of an input, never an
# input itself): a fused step may write over their outputs once nothing reads them.
FRESH = ELEMENTWISE | frozenset({"MatMul", "Convolution", "GroupConvolution", "MVN", "Softmax",
                                 "ReduceMean", "ReduceSum", "ScaledDotProductAttention"})
# Layers that move no data, or little (a view, or a copy of a small tensor): where one feeds a
# fused step alone, it joins the step (attention's Reshape and Transpose of Q, K and V).
VIEWS = frozenset({"Reshape", "Squeeze", "Unsqueeze", "Transpose"})


def _variants(*pieces) -> list[tuple]:
    """Every pattern made of one alternative of each piece (a piece: a list of alternatives,
    each a list of layers), longest first."""
    found = [tuple(itertools.chain(*choice)) for choice in itertools.product(*pieces)]
    return sorted(found, key=len, reverse=True)


def _one(types) -> frozenset:
    return frozenset({types} if isinstance(types, str) else types)


def _layers(*layers) -> list:
    return [(label, _one(types), tuple(inputs)) for label, types, inputs in layers]


# LayerNorm: (x - mean) / sqrt(mean((x - mean)^2) + eps) [* gamma [+ beta]]
_CENTRED = [_layers(("mean", REDUCE_MEAN, ("x", "axes")), ("centred", SUBTRACT_T, ("x", "mean")))]


def _square(of: str) -> list:
    return [_layers(("square", POWER, (of, "two"))),
            _layers(("square", MULTIPLY_T, (of, of)))]


def _normalized(of: str) -> list:
    """``of`` divided by sqrt(variance + eps), the three ways converters write it."""
    return [_layers(("std", SQRT, ("shifted",)), ("normed", DIVIDE, (of, "std"))),
            _layers(("rstd", POWER, ("shifted", "minus_half")),
                    ("normed", MULTIPLY_T, (of, "rstd"))),
            _layers(("std", SQRT, ("shifted",)), ("rstd", DIVIDE, ("one", "std")),
                    ("normed", MULTIPLY_T, (of, "rstd")))]


_VARIANCE = [_layers(("variance", REDUCE_MEAN, ("square", "axes2")),
                     ("shifted", ADD, ("variance", "eps")))]
_AFFINE = [_layers(("scaled", MULTIPLY_T, ("normed", "gamma")), ("out", ADD, ("scaled", "beta"))),
           _layers(("scaled", MULTIPLY_T, ("normed", "gamma"))), []]
_SCALED = [_layers(("scaled", MULTIPLY_T, ("normed", "gamma"))), []]

# GELU: x * 0.5 * (1 + erf(x / sqrt 2)) and its tanh form, in the three orders of the products
_ERF_PART = [_layers(("inner", (DIVIDE, MULTIPLY_T), ("x", "root2")), ("e", ERF, ("inner",)),
                     ("e1", ADD, ("e", "one")))]
_CUBE = [_layers(("cube", POWER, ("x", "three"))),
         _layers(("sq", MULTIPLY_T, ("x", "x")), ("cube", MULTIPLY_T, ("sq", "x")))]
_TANH_PART = [_layers(("k", MULTIPLY_T, ("cube", "c")), ("inner", ADD, ("x", "k")),
                      ("scaled", MULTIPLY_T, ("inner", "root2pi")), ("e", TANH, ("scaled",)),
                      ("e1", ADD, ("e", "one")))]
_HALF_TIMES = [_layers(("half", MULTIPLY_T, ("x", "h")), ("out", MULTIPLY_T, ("half", "e1"))),
               _layers(("xe", MULTIPLY_T, ("x", "e1")), ("out", MULTIPLY_T, ("xe", "h"))),
               _layers(("he", MULTIPLY_T, ("e1", "h")), ("out", MULTIPLY_T, ("x", "he")))]

# Swish (SiLU): x * sigmoid(x) [x * sigmoid(beta * x)]; HSwish: x * clamp(x + 3, 0, 6) / 6
_SIGMOID = [_layers(("bx", MULTIPLY_T, ("x", "beta")), ("s", SIGMOID, ("bx",))),
            _layers(("s", SIGMOID, ("x",)))]
_RELU6 = [_layers(("a", ADD, ("x", "three")), ("c", CLAMP, ("a",))),
          _layers(("a", ADD, ("x", "three")), ("r", RELU, ("a",)), ("c", MINIMUM, ("r", "six")))]
_SIXTH = [_layers(("m", MULTIPLY_T, ("x", "c")), ("out", (DIVIDE, MULTIPLY_T), ("m", "six_"))),
          _layers(("d", (DIVIDE, MULTIPLY_T), ("c", "six_")), ("out", MULTIPLY_T, ("x", "d")))]

# Attention: softmax(Q K^T [* or / scale] [+ mask, or a Select by a mask]) V
_SCORES = [_layers(("scores", MATMUL, ("q", "k"))),
           _layers(("qs", (MULTIPLY_T, DIVIDE), ("q", "scale")), ("scores", MATMUL, ("qs", "k")))]
_SCALE = [_layers(("s2", (MULTIPLY_T, DIVIDE), ("scores", "scale2"))), []]


def _attention() -> list[tuple]:
    found = []
    for scores, scale, mask in itertools.product(_SCORES, _SCALE, range(4)):
        last = scale[-1][0] if scale else "scores"
        masked = ([], _layers(("m", ADD, (last, "mask"))),
                  _layers(("m", SELECT, ("cond", last, "fill"))),
                  _layers(("m", SELECT, ("cond", "fill", last))))[mask]
        into = masked[-1][0] if masked else last
        found.append(tuple(scores + scale + masked + _layers(
            ("p", SOFTMAX, (into,)), ("out", MATMUL, ("p", "v")))))
    return sorted(found, key=len, reverse=True)


@dataclass(frozen=True)
class Pattern:
    name: str
    variants: tuple  # each a tuple of (label, types, inputs), tried in order
    activation: bool = False  # a function of one value: an epilogue chain may take it in

    @functools.cached_property
    def anchors(self) -> frozenset:
        """The types a match starts from: the first layer's of some variant."""
        return frozenset().union(*(v[0][1] for v in self.variants))

    @functools.cached_property
    def needs(self) -> tuple[frozenset, ...]:
        """Sets of types of which every variant holds one: a model without a layer of each
        holds no match (checked first: most models hold few of the patterns)."""
        sets = {types for types in (t for _, t, _ in self.variants[0])}
        return tuple(t for t in sets if all(any(t == u for _, u, _ in v) for v in self.variants))


# Rotary position embedding (RoPE) as transformers writes it: x * cos + cat(-x2, x1) * sin, x1
# and x2 the halves of x (two Slices of it)
_ROTATED = [_layers(("x2", SLICE, ("x", "b2", "e2", "s2", "a2")),
                    ("neg", MULTIPLY_T, ("x2", "minus")),
                    ("x1", SLICE, ("x", "b1", "e1", "s1", "a1")),
                    ("cat", CONCAT_T, ("neg", "x1")))]
_ROPE_SUM = [_layers(("rs", MULTIPLY_T, ("cat", "sin")), ("xc", MULTIPLY_T, ("x", "cos")),
                     ("out", ADD, ("xc", "rs")))]

PATTERNS = (
    Pattern("Attention", tuple(_attention())),
    Pattern("RoPE", tuple(_variants(_ROTATED, _ROPE_SUM))),
    Pattern("LayerNorm", tuple(_variants(_CENTRED, _square("centred"), _VARIANCE,
                                         _normalized("centred"), _AFFINE))),
    Pattern("RMSNorm", tuple(_variants(_square("x"), _VARIANCE, _normalized("x"), _SCALED))),
    Pattern("GELU", tuple(_variants(_ERF_PART, _HALF_TIMES)), activation=True),
    Pattern("GELU(tanh)", tuple(_variants(_CUBE, _TANH_PART, _HALF_TIMES)), activation=True),
    Pattern("HSwish", tuple(_variants(_RELU6, _SIXTH)), activation=True),
    Pattern("Swish", tuple(_variants(_SIGMOID, [_layers(("out", MULTIPLY_T, ("x", "s")))])),
            activation=True),
)


# --- finding the patterns -----------------------------------------------------------------------

@dataclass
class Group:
    """Layers that become one step: ``nodes`` (any order), ``root`` the one whose output the
    step gives; ``activation``: a function of one value (a pattern so marked)."""

    name: str
    nodes: list
    root: Node
    activation: bool = False


class _Finder:
    """Matches the tables against a model's layers. ``eligible(node)``: whether the plan runs
    the layer as a step a fused step may take in (not folded, not shape arithmetic, checks that
    read no values)."""

    def __init__(self, eligible):
        self.eligible = eligible
        self.claimed: set[int] = set()

    def match(self, variant, anchor: Node) -> dict | None:
        label, types, inputs = variant[0]
        if anchor.type not in types or not self._fits(anchor, len(inputs)):
            return None
        for order in self._orders(anchor.type, inputs):
            bound: dict = {}
            if self._bind(anchor, order, bound, {}):
                found = self._rest(variant, 1, {label: anchor}, bound)
                if found is not None:
                    return found
        return None

    def _fits(self, node: Node, count: int) -> bool:
        return node.id not in self.claimed and len(node.inputs) == count \
            and len(node.outputs) == 1 and self.eligible(node)

    @staticmethod
    def _orders(type_name: str, inputs: tuple):
        return (inputs, inputs[::-1]) if type_name in COMMUTATIVE and len(inputs) == 2 \
            else (inputs,)

    @staticmethod
    def _bind(node: Node, names, bound: dict, labelled: dict) -> bool:
        """Bind ``node``'s input ports to ``names`` (in place in ``bound``; False, with
        ``bound`` unchanged, where they do not fit)."""
        added = []
        for port, name in zip(node.inputs, names):
            source = port.source
            if source is None:
                break
            want = labelled[name].outputs[0] if name in labelled else bound.get(name)
            if want is None:
                bound[name] = source
                added.append(name)
            elif want is not source:
                break
        else:
            return True
        for name in added:
            del bound[name]
        return False

    def _rest(self, variant, at: int, labelled: dict, bound: dict) -> dict | None:
        if at == len(variant):
            return labelled
        label, types, inputs = variant[at]
        seen = set()
        for name in inputs:  # a layer of the pattern reads a value already found
            port = labelled[name].outputs[0] if name in labelled else bound.get(name)
            if port is None:
                continue
            for consumer in port.consumers:
                node = consumer.node
                if node.id in seen or node.type not in types \
                        or any(node is n for n in labelled.values()) \
                        or not self._fits(node, len(inputs)):
                    continue
                seen.add(node.id)
                for order in self._orders(node.type, inputs):
                    trial = dict(bound)
                    if self._bind(node, order, trial, labelled):
                        found = self._rest(variant, at + 1, {**labelled, label: node}, trial)
                        if found is not None:
                            return found
        return None


def _closed(nodes, root: Node) -> bool:
    """Whether every value made inside, the root's excepted, is read only inside."""
    ids = {n.id for n in nodes}
    return all(c.node.id in ids for n in nodes if n is not root
               for p in n.outputs for c in p.consumers)


def find_groups(order, eligible) -> list[Group]:
    """The fused steps among ``order`` (layers in topological order): the named patterns,
    then epilogue chains (a layer, or a pattern, then element-wise layers or activation
    patterns each reading the value before it alone), then the view layers that feed a step
    alone taken in."""
    finder = _Finder(eligible)
    groups: list[Group] = []
    by_type: dict[str, list] = {}
    for node in order:
        by_type.setdefault(node.type, []).append(node)
    position = {node.id: i for i, node in enumerate(order)}
    for pattern in PATTERNS:
        if not all(any(t in by_type for t in types) for types in pattern.needs):
            continue
        anchors = [n for t in pattern.anchors for n in by_type.get(t, ())]
        anchors.sort(key=lambda n: position[n.id])
        for node in anchors:
            if node.id in finder.claimed:
                continue
            for variant in pattern.variants:
                if node.type not in variant[0][1]:
                    continue
                labelled = finder.match(variant, node)
                if labelled is None:
                    continue
                nodes = list(labelled.values())
                root = labelled[variant[-1][0]]
                if _closed(nodes, root):
                    groups.append(Group(pattern.name, nodes, root, pattern.activation))
                    finder.claimed.update(n.id for n in nodes)
                    break
    groups = _chains(order, groups, finder)
    for group in groups:
        _take_views(group, finder)
    return groups


def _chains(order, groups: list[Group], finder: _Finder) -> list[Group]:
    """Epilogue chains: from each layer (or group) in order, the element-wise layers (or
    activation patterns) after it, each the only reader of the value before it."""
    unit_of = {n.id: g for g in groups for n in g.nodes}
    done: set[int] = set()
    chains: list[Group] = []
    for node in order:
        head = unit_of.get(node.id)
        if head is not None and node is not head.root or node.id in done:
            continue
        if head is None:
            if node.id in finder.claimed or len(node.outputs) != 1 or not finder.eligible(node):
                continue
            head = Group(node.type, [node], node)
        parts, value = [head], head.root.outputs[0]
        while True:
            readers = {c.node.id: c.node for c in value.consumers}
            if not readers:
                break
            first = next(iter(readers.values()))
            unit = unit_of.get(first.id)
            if unit is None:
                if len(readers) != 1 or first.type not in ELEMENTWISE \
                        or first.id in finder.claimed or not finder._fits(first,
                                                                          len(first.inputs)):
                    break
                unit = Group(first.type, [first], first)
            elif not unit.activation or any(unit_of.get(i) is not unit for i in readers) \
                    or unit.root.id in done:
                break
            parts.append(unit)
            value = unit.root.outputs[0]
        if len(parts) == 1:
            continue
        nodes = [n for p in parts for n in p.nodes]
        chain = Group("+".join(p.name for p in parts), nodes, parts[-1].root)
        finder.claimed.update(n.id for n in nodes)
        done.update(n.id for n in nodes)
        chains.append(chain)
    merged = {id(p) for c in chains for p in [unit_of.get(n.id) for n in c.nodes] if p}
    return [g for g in groups if id(g) not in merged] + chains


def _take_views(group: Group, finder: _Finder) -> None:
    """View layers (Reshape, Transpose ...) whose output only the group reads join it."""
    ids = {n.id for n in group.nodes}
    grown = True
    while grown:
        grown = False
        for node in list(group.nodes):
            for port in node.inputs:
                source = port.source.node if port.source is not None else None
                if source is None or source.id in ids or source.type not in VIEWS \
                        or not finder._fits(source, len(source.inputs)) \
                        or not all(c.node.id in ids for c in source.outputs[0].consumers):
                    continue
                group.nodes.append(source)
                ids.add(source.id)
                finder.claimed.add(source.id)
                grown = True


# --- the fused steps ------------------------------------------------------------------------------

def fuse_steps(order, steps: list, writers: list) -> tuple[list, list]:
    """The plan's steps with each pattern's layers replaced by one step (runtime/plan.py calls
    this once its steps are made, before it decides what to free). ``steps``: the plan's Steps,
    one per layer (``location.layer_id``); ``writers``: each step's in-place variant or None.
    The fused step takes the place of the pattern's last layer; it reads what the pattern
    reads from outside, and gives the last layer's output."""
    index = {step.location.layer_id: i for i, step in enumerate(steps)}

    def eligible(node) -> bool:
        i = index.get(str(node.id))
        if i is None or node.bodies or node.op is None or node.op.spec.keeps_state:
            return False
        step = steps[i]
        return step.memo is None and not step.valued and len(step.outputs) == 1

    groups = find_groups(order, eligible)
    if not groups:
        return steps, writers
    replaced: dict[int, tuple] = {}
    gone: set[int] = set()
    for group in groups:
        made = _group_step(group, steps, writers, index)
        if made is not None:
            members, replaced[members[-1]] = made
            gone.update(members[:-1])
    return _replace_steps(steps, writers, replaced, gone)


def _group_step(group: Group, steps: list, writers: list, index: dict):
    """``(members, (step, writer))``: the group's steps (their plan positions, in order) and the
    one fused step for them; None where the group's last step is not its root's (never: every
    layer of a pattern leads to its root)."""
    members = sorted(index[str(n.id)] for n in group.nodes)
    if steps[members[-1]].location.layer_id != str(group.root.id):
        return None
    nodes = {str(n.id): n for n in group.nodes}
    return members, _fused_step(group, [steps[i] for i in members],
                                [writers[i] for i in members], nodes)


def _replace_steps(steps: list, writers: list, replaced: dict, gone: set) -> tuple[list, list]:
    """The steps and writers with those at the positions ``gone`` left out and those in
    ``replaced`` (position -> (step, writer)) put in their places."""
    new_steps, new_writers = [], []
    for i, (step, writer) in enumerate(zip(steps, writers)):
        if i in gone:
            continue
        if i in replaced:
            step, writer = replaced[i]
        new_steps.append(step)
        new_writers.append(writer)
    return new_steps, new_writers


def _fused_step(group: Group, members: list, writers: list, nodes: dict):
    """One Step for the group's steps (``members``, in plan order; the last is the root's)."""
    made = {s.outputs[0]: i for i, s in enumerate(members)}  # slot -> the layer making it
    inputs: list[int] = []
    for step in members:
        for s in step.inputs:
            if s not in made and s not in inputs:
                inputs.append(s)
    count = len(inputs)
    at = {s: i for i, s in enumerate(inputs)}

    def ref(slot: int) -> int:
        return count + made[slot] if slot in made else at[slot]

    refs = [tuple(ref(s) for s in step.inputs) for step in members]
    last_use: dict[int, int] = {}
    readers: dict[int, list] = {}
    for i, rs in enumerate(refs):
        for r in rs:
            last_use[r] = i
            readers.setdefault(r, []).append(nodes[members[i].location.layer_id])
    layers = []
    for i, (step, writer) in enumerate(zip(members, writers)):
        node = nodes[step.location.layer_id]
        out_type = node.outputs[0].element_type
        overwritable = tuple(p for p, r in enumerate(refs[i])
                             if r >= count and last_use[r] == i
                             and _may_write_over(members, nodes, r - count, readers[r],
                                                 out_type))
        dead = tuple(sorted({r for r in refs[i] if r >= count and last_use[r] == i}))
        layers.append(Layer(step.kernel, refs[i], writer, ufunc_of(step, node), overwritable,
                            dead, step.check, step.location))
    sized = any(s.sized for s in members)
    kernel = FusedKernel(group.name, tuple(layers), count, sized)
    checked = any(layer.check is not None for layer in layers)
    root = members[-1]
    step = dataclasses.replace(
        root, type=group.name, kernel=kernel, inputs=tuple(inputs), outputs=root.outputs,
        free=(), in_place=None, check=kernel.check if checked else None, memo=None,
        memo_by_shape=False, memo_args=(), checked=set() if checked else None, valued=(),
        check_values=None, sized=sized)
    return step, None


def _may_write_over(members, nodes, made_by: int, readers: list, out_type) -> bool:
    """Whether a value made inside a fused step may be written over by its last reader: the
    layer made it in memory of its own, every reader is such a layer (none keeps a view of
    it), and it has the reader's output type."""
    maker = nodes[members[made_by].location.layer_id]
    return maker.type in FRESH and all(r.type in FRESH for r in readers) \
        and maker.outputs[0].element_type == out_type


def ufunc_of(step, node: Node):
    """The numpy ufunc that the step's kernel is for its layer's element types (the spec's
    ``ufunc``), or None: what fused steps, the loop fast path (runtime/loop_code.py) and the
    steps of a call like one before (runtime/call_code.py) call directly."""
    kernel = step.kernel
    if isinstance(kernel, functools.partial):
        kernel = kernel.func  # attributes bound: the kernels that declare a ufunc read none
    declared = node.op.spec.ufunc
    if declared is None or kernel is not node.op.kernel:
        return None
    types = {p.source.element_type for p in node.inputs}
    shape = node.outputs[0].partial_shape if len(node.outputs) == 1 else None
    if len(types) != 1 or shape is None or not shape.rank_is_static or len(shape) == 0:
        return None
    et = types.pop()
    if et is None or et.is_dynamic:
        return None
    ufunc, kinds = declared
    try:
        return ufunc if numeric.kind(et.dtype) in kinds else None
    except KeyError:
        return None


def fused_names(plan) -> dict[str, str]:
    """The fused steps of a plan: their pattern's name by the layer id their time is counted
    under (the pattern's last layer), for ``irexec bench --per-op``."""
    return {step.location.layer_id: step.kernel.name for step in plan.steps
            if isinstance(step.kernel, FusedKernel)}


# === A KV cache appended in place =================================================================
#
# A stateful decoder's cache: ReadValue(v) -> [Gather along axis 0 by the beam indices] ->
# Concat(cache, new positions) -> Assign(v). The three layers get kernels that keep the cache in
# a block with room (irexec/kernels/growing.py): the same values, without copying the whole
# cache on every call. Found where the Concat's output is read by no Result (the caller never
# holds the block) and all three run as steps of their own. (The Gather's output may be the
# variable's array itself, as ReadValue's is: no step writes into an array it cannot prove
# private, and the variables hold it.)

READ_VALUE, ASSIGN, CONCAT, GATHER, RESULT = "ReadValue", "Assign", "Concat", "Gather", "Result"


def kv_appends(order, steps: list) -> list:
    """The plan's steps with each KV cache pattern's Gather, Concat and Assign given the
    kernels of kernels/growing.py (runtime/plan.py calls this after ``fuse_steps``)."""
    index = {step.location.layer_id: i for i, step in enumerate(steps)}

    def own_step(node):
        """The plan's step running ``node``'s own kernel alone, or None."""
        i = index.get(str(node.id))
        if i is None or node.op is None:
            return None
        kernel = steps[i].kernel
        if getattr(kernel, "func", kernel) is not node.op.kernel or steps[i].memo is not None:
            return None
        return i

    replaced = {}
    for node in order:
        if node.type != ASSIGN or len(node.inputs) != 1:
            continue
        variable = node.attrs.get("variable_id")
        concat = node.inputs[0].source.node
        if concat.type != CONCAT or len(concat.inputs) != 2 or any(
                c.node.type == RESULT for c in concat.outputs[0].consumers):
            continue
        past = concat.inputs[0].source.node
        gather = None
        if past.type == GATHER and len(past.inputs) == 3 and _zero(past.inputs[2].source) \
                and not past.attrs.get("batch_dims", 0):
            gather, past = past, past.inputs[0].source.node
        if past.type != READ_VALUE or past.attrs.get("variable_id") != variable:
            continue
        at = [own_step(n) for n in (node, concat) + ((gather,) if gather else ())]
        if any(i is None for i in at):
            continue
        assign_at, concat_at = at[0], at[1]
        replaced[concat_at] = functools.partial(growing.append, axis=concat.attrs["axis"])
        replaced[assign_at] = functools.partial(growing.keep, variable_id=variable,
                                                assign=steps[assign_at].kernel)
        if gather is not None:
            replaced[at[2]] = functools.partial(growing.rows, gather=steps[at[2]].kernel)
    if not replaced:
        return steps
    return [dataclasses.replace(step, kernel=replaced[i]) if i in replaced else step
            for i, step in enumerate(steps)]


def _zero(port: OutputPort | None) -> bool:
    """Whether ``port`` is a Constant holding the one integer 0."""
    node = port.node if port is not None else None
    if node is None or node.op is None or node.op.spec.role != "constant":
        return False
    value = getattr(node, "value", None)
    return value is not None and value.size == 1 and value.dtype.kind in "iu" \
        and int(value.reshape(-1)[0]) == 0


# === Attention over grouped keys and values =======================================================
#
# Grouped-query attention as converters write it: each of the key and the value, of G heads, is
# Unsqueezed, Broadcast to R copies per head and Reshaped to G*R heads before the
# ScaledDotProductAttention. The step made of those seven layers runs the attention's own kernel
# on the G heads as they are, with the query's heads split into [G, R] (and a mask's, where it
# has them): numpy's matmul takes each matrix of a batch as it is, so every product, every
# softmax is the one over the copies, bit for bit, and the copies (the whole cache, R times, on
# every decode step) are never made. Where a call's shapes are not of that form, the step runs
# its layers as written.

UNSQUEEZE, BROADCAST, RESHAPE_T, SDPA = ("Unsqueeze", "Broadcast", "Reshape",
                                         "ScaledDotProductAttention")
BROADCAST_MODES = frozenset({"numpy", "bidirectional"})


def grouped_attention(order, steps: list, writers: list) -> tuple[list, list]:
    """The plan's steps with each grouped attention (above) made one step (runtime/plan.py
    calls this after ``fuse_steps``)."""
    index = {step.location.layer_id: i for i, step in enumerate(steps)}

    def own(node) -> bool:
        i = index.get(str(node.id))
        if i is None or node.op is None or steps[i].memo is not None:
            return False
        kernel = steps[i].kernel
        return getattr(kernel, "func", kernel) is node.op.kernel and len(steps[i].outputs) == 1

    def only_reader(node, reader) -> bool:
        return all(c.node is reader for p in node.outputs for c in p.consumers)

    def chain(port, sdpa):
        """The Reshape(Broadcast(Unsqueeze(x))) feeding ``sdpa`` at ``port``, or None."""
        r = port.source.node if port.source is not None else None
        if r is None or r.type != RESHAPE_T or len(r.inputs) != 2 or not only_reader(r, sdpa):
            return None
        b = r.inputs[0].source.node
        if b.type != BROADCAST or len(b.inputs) != 2 or not only_reader(b, r) \
                or str(b.attrs.get("mode", "numpy")).lower() not in BROADCAST_MODES:
            return None
        u = b.inputs[0].source.node
        if u.type != UNSQUEEZE or len(u.inputs) != 2 or not only_reader(u, b):
            return None
        return [u, b, r] if all(own(n) for n in (u, b, r)) else None

    groups = []
    for node in order:
        if node.type != SDPA or len(node.inputs) < 3 or not own(node):
            continue
        k, v = chain(node.inputs[1], node), chain(node.inputs[2], node)
        if k is None or v is None:
            continue
        groups.append(Group("GroupedAttention", k + v + [node], node))
    if not groups:
        return steps, writers
    replaced, gone = {}, set()
    for group in groups:
        made = _group_step(group, steps, writers, index)
        if made is None:
            continue
        members, (step, _) = made
        fused = step.kernel
        # where each of the seven layers sits among the step's layers (plan order)
        roles = tuple(members.index(index[str(n.id)]) for n in group.nodes)
        kernel = GroupedAttentionKernel(fused.name, fused.layers, fused.count, fused.sized,
                                        roles, (bool(group.nodes[2].attrs.get("special_zero")),
                                                bool(group.nodes[5].attrs.get("special_zero"))))
        replaced[members[-1]] = (dataclasses.replace(
            step, kernel=kernel, check=kernel.check if step.check is not None else None), None)
        gone.update(members[:-1])
    return _replace_steps(steps, writers, replaced, gone)


class GroupedAttentionKernel(FusedKernel):
    """A grouped attention step's kernel: its layers (plan order) are the key's Unsqueeze,
    Broadcast and Reshape, the value's, and the attention, at the positions ``roles`` gives in
    that order; ``special_zero``: the key's and the value's Reshape's. The attention's kernel
    on the G heads where the call's shapes allow (``_grouped``), else the layers in order
    (FusedKernel)."""

    __slots__ = ("sides", "attention", "others")

    def __init__(self, name, layers, count, sized, roles, special_zero):
        super().__init__(name, layers, count, sized)
        chosen = [layers[i] for i in roles]
        # for the key and the value: the step's inputs their Unsqueeze, Broadcast and Reshape
        # read (data, axes, target shape, reshape pattern), and the Reshape's special_zero
        self.sides = tuple(
            chosen[at].refs + chosen[at + 1].refs[1:] + chosen[at + 2].refs[1:] + (zero,)
            for at, zero in ((0, special_zero[0]), (3, special_zero[1])))
        self.attention = chosen[6]
        # the attention's other inputs (query, mask, scale) as step inputs, in order
        self.others = tuple(r for i, r in enumerate(self.attention.refs) if i not in (1, 2))
        if any(r >= count for side in self.sides for r in side[:4]) \
                or any(r >= count for r in self.others):
            self.sides = None  # (never: the finder takes no layer that makes them)

    def __call__(self, *inputs):
        if self.sides is not None and not checked_pending():
            result = self._grouped(inputs)
            if result is not None:
                ran(self, inputs)
                return result
        return FusedKernel.__call__(self, *inputs)

    def _grouped(self, inputs):
        (kd, ka, kt, kp, kz), (vd, va, vt, vp, vz) = self.sides
        key = _grouping(inputs[kd], inputs[ka], inputs[kt], inputs[kp], kz)
        if key is None:
            return None
        value = _grouping(inputs[vd], inputs[va], inputs[vt], inputs[vp], vz)
        if value is None or value[0] != key[0]:
            return None
        axis, g, r = key[0]
        others = self.others
        query = inputs[others[0]]
        shape = query.shape if type(query) is np.ndarray else ()
        if len(shape) != key[1].ndim - 1 or shape[axis] != g * r:
            return None
        args = [query.reshape(shape[:axis] + (g, r) + shape[axis + 1:]), key[1], value[1]]
        if len(others) > 1:
            mask = _split_heads(inputs[others[1]], len(shape), axis, g, r)
            if mask is None:
                return None
            args.append(mask)
            args.extend(inputs[o] for o in others[2:])
        if (key[1].nbytes + value[1].nbytes) * r > budget.current():
            # the copies the layers make: the memory rule as they meet it (their error)
            self.check(list(inputs))
        try:
            out = self.attention.kernel(*args)
        except OpError as e:
            raise IRError.make(e.code or "IR605", str(e), self.attention.location) from None
        shape = out.shape
        return out.reshape(shape[:axis] + (g * r,) + shape[axis + 2:])


def _grouping(data, axes, target, pattern, special_zero: bool):
    """For one of key and value: ((heads axis, G, R), the data with its new axis) where
    Unsqueeze(data, axes) -> Broadcast(target) -> Reshape(pattern) repeats each of G heads R
    times along the axis before the new one; else None."""
    if type(data) is not np.ndarray or axes.dtype.kind not in "iu" \
            or target.dtype.kind not in "iu" or pattern.dtype.kind not in "iu":
        return None
    a, t, p = axes.tolist(), target.tolist(), pattern.tolist()
    if type(a) is list:
        if len(a) != 1:
            return None
        a = a[0]
    dims = data.shape
    rank = len(dims) + 1
    if not -rank <= a < rank or type(t) is not list or type(p) is not list or len(t) != rank:
        return None
    a %= rank
    if a == 0 or t[:a] != list(dims[:a]) or t[a + 1:] != list(dims[a:]) or t[a] < 1:
        return None
    merged = t[:a - 1] + [t[a - 1] * t[a]] + t[a + 1:]
    if p != merged:
        if len(p) != len(merged) or p.count(-1) > 1:
            return None
        for i, (want, given) in enumerate(zip(merged, p)):
            if not (given == want or given == -1 and want != 0
                    or special_zero and given == 0 and t[i] == want):
                return None
    return (a - 1, t[a - 1], t[a]), data.reshape(dims[:a] + (1,) + dims[a:])


def _split_heads(mask, rank: int, axis: int, g: int, r: int):
    """The attention mask for queries whose heads axis ``axis`` (of ``rank``) is split into
    [g, r]: as it is when it does not reach that axis, its heads split the same way (or a 1
    made [1, 1]) when it does; None otherwise."""
    if type(mask) is not np.ndarray:
        return None
    at = mask.ndim - (rank - axis)  # the mask's dim aligned with the heads
    if at < 0:
        return mask
    heads = mask.shape[at]
    if heads == 1:
        return mask.reshape(mask.shape[:at] + (1, 1) + mask.shape[at + 1:])
    if heads == g * r:
        return mask.reshape(mask.shape[:at] + (g, r) + mask.shape[at + 1:])
    return None
