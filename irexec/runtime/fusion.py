"""Patterns the plan computes as one piece rather than layer by layer.

NOTE for developers: this is the one place outside the ops' own files that names op types (the
house rule, docs/ARCHITECTURE.md). Each pattern is a small table of layer types with a function
that finds it and one that computes it, and each has its own test (tests/runtime/test_fusion.py).

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

from dataclasses import dataclass

import numpy as np

from irexec.ir import element_type as et_table
from irexec.ir.model import Node, OutputPort
from irexec.kernels.convert import convert

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
