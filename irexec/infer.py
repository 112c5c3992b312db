"""Shape and type inference: a topological walk where each op's spec and ``infer`` give the
element type and partial shape of every output.

Before an op's own ``infer`` runs, the generic rules its spec declares are checked here, once for
all ops: the number of ports, each input's element-type rule and rank rule. The dims each port
declares in the XML are then compared with what was inferred (``-1`` matches anything).

A layer that fails gets unknown outputs, and layers fed by it are skipped, so one mistake is
reported once and unrelated mistakes elsewhere are still found.

Values, as OpenVINO's shape inference knows them. Besides types, the walk keeps what it knows of
the values of small tensors, so that an op's rule can read them with ``ctx.input_value(i)``
(exact values) and ``ctx.input_bounds(i)`` (a lower and an upper bound per element):

* a Constant's values are known;
* a layer whose inputs' values are all known, and whose outputs are small (``FOLD_LIMIT``
  elements), is folded: its kernel runs once, here, and its outputs' values (and their now
  exact shapes: NonZero of a constant is static) are known;
* otherwise the outputs' bounds come from the inputs' (irexec/ops/bounds.py: ShapeOf of a
  partial shape starts them; data movement, arithmetic, Convert and Select carry them), and
  where both bounds agree the values are known.

So a Reshape whose target shape comes from ShapeOf -> Gather -> Concat reads the target as
values when the input shape is static, and as bounds (``[?,768]``, a batch of ``1..8``) when it
is not. Folding here only informs inference: the plan folds constant subgraphs of any size once
when the model is compiled (irexec/runtime/plan.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from irexec import budget, gc_pause
from irexec.errors import IRError, OpError
from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType
from irexec.ir.model import Model, Node, OutputPort
from irexec.ir.shape import Dimension, PartialShape
from irexec.ops import bounds as bounds_rules
from irexec.ops.spec import TensorType, TypeVar, resolve
from irexec.diagnostics.diagnostic import Diagnostics, Location


FOLD_LIMIT = 1 << 12  # elements: larger outputs (and inputs) are not folded while inferring
BOUND_LIMIT = 1 << 10  # elements: larger integer tensors carry no bounds


class _LayerFailed(Exception):
    """Raised by InferContext.error to stop inferring one layer."""


class InferContext:
    """What an op's ``infer`` (and its shape rule) sees: parsed attributes, input types, and
    input values where they are known before running (a Constant; at run time, the call's)."""

    def __init__(self, node: Node, input_types: list[TensorType],
                 input_values: list[np.ndarray | None], diags: Diagnostics,
                 read_time: bool = True, input_bounds=None, memory_limit: int | None = None):
        self.node = node
        self.memory_limit = memory_limit  # the budget of the walk (None: ask irexec.budget)
        self.read_time = read_time  # False while checking one call's inputs
        self.attrs = node.attrs
        self.spec = node.op.spec
        self._types = input_types
        self._values = input_values
        self._bounds = input_bounds
        self._diags = diags
        self._bound: dict[str, ElementType] = {}

    @property
    def num_inputs(self) -> int:
        return len(self._types)

    def input_type(self, i: int) -> TensorType:
        return self._types[i]

    def input_shape(self, i: int) -> PartialShape:
        return self._types[i].shape

    def input_shapes(self) -> list[PartialShape]:
        return [t.shape for t in self._types]

    def input_value(self, i: int) -> np.ndarray | None:
        """The input's values when they are known before running (a Constant, or computed from
        constants and shapes: see the module's docstring), else None. Ask only for the inputs
        the rule needs (at run time every input is known)."""
        value = self._values[i] if i < len(self._values) else None
        if value is None and self.read_time and i < len(self._types):
            self.node.values_unknown = True  # the rule's value checks wait for the call
        return value

    def input_bounds(self, i: int) -> tuple[np.ndarray, np.ndarray] | None:
        """A lower and an upper bound of each element of the input (float64 arrays of its
        shape; -inf/inf where unbounded), when inference knows them; exact values give equal
        bounds. None when nothing is known (only small integer tensors carry bounds)."""
        if i >= len(self._types) or not _boundable(self._types[i]):
            return None
        value = self.input_value(i)
        if value is not None:
            return bounds_rules.exact(value) if value.dtype.kind in "biu" else None
        return self._bounds[i] if self._bounds is not None else None

    def input_as_shape(self, i: int) -> PartialShape | None:
        """A 1-D integer input read as a shape (Broadcast's target shape, Range's ...): its
        values as static dims, else its bounds as interval dims, else as many dynamic dims as
        its static length; None when not even its length is known."""
        value = self.input_value(i)
        if value is not None:
            return PartialShape([max(int(v), 0) for v in bounds_rules.exact(value)[0].reshape(-1)])
        got = self.input_bounds(i)
        if got is not None:
            return PartialShape._of(tuple(bounds_rules.as_dims(got)))
        shape = self.input_shape(i)
        if shape.rank_is_static and len(shape) == 1 and shape[0].is_static:
            return PartialShape([Dimension.dynamic()] * shape[0].min)
        return None

    def type_var(self, name: str) -> ElementType:
        """The element type bound to a type variable by the inputs (dynamic if unbound)."""
        return self._bound.get(name, ElementType.dynamic)

    def error(self, code: str, message: str):
        self._diags.add(code, message, self.node.location)
        raise _LayerFailed

    def stop(self):
        """Stop inferring this layer: its problems are already reported (inside a body)."""
        raise _LayerFailed

    def infer_body(self, name: str, parameter_types: dict[int, TensorType]) \
            -> dict[int, TensorType] | None:
        """Infer the layer's body ``name`` with its Parameters (by layer id) of these types:
        the type reaching each Result (by layer id), or None when the body has errors (reported
        with their own lines). At read time the body's ports keep the types found."""
        model = self.node.bodies[name].model
        overrides = {model.by_id[i].name: t for i, t in parameter_types.items()}
        diags = Diagnostics()
        types = infer_types(model, diags, overrides, check_declared=self.read_time)
        for d in diags:
            self._diags.items.append(d)
        if diags.errors:
            return None
        if self.read_time:
            for port, t in types.items():
                port.element_type, port.partial_shape = t.element_type, t.shape
        out = {}
        for result in model.results:
            source = result.inputs[0].source if result.inputs else None
            if source is None or source not in types:
                return None
            out[result.id] = types[source]
        return out

    def warn(self, code: str, message: str) -> None:
        self._diags.add(code, message, self.node.location)

    def output_element_types(self, count: int) -> list[ElementType]:
        """The element type of each of ``count`` outputs, as the spec's outputs declare them."""
        outs = self.spec.outputs
        types = []
        for i in range(count):
            out = outs[min(i, len(outs) - 1)] if outs else None
            rule = out.type if out is not None else None
            if isinstance(rule, TypeVar):
                types.append(self.type_var(rule.name))
            elif isinstance(rule, str) and rule.startswith("@"):
                types.append(self.attrs[rule[1:]])
            elif isinstance(rule, str):
                types.append(et_table.from_name(rule))
            else:
                types.append(self._types[0].element_type if self._types
                             else ElementType.dynamic)
        return types

    def default_outputs(self) -> list[TensorType]:
        """The outputs the spec describes: shapes from its shape rule (the first input's shape
        when it has none), element types from its output declarations."""
        rule = self.spec.shape
        if rule is not None:
            try:
                shapes = rule(self)
            except OpError as e:
                self.error(e.code or "IR308", str(e))
        else:
            shape = self._types[0].shape if self._types else PartialShape([])
            shapes = [shape] * len(self.spec.outputs)
        return [TensorType(et, shape)
                for et, shape in zip(self.output_element_types(len(shapes)), shapes)]


def _check_spec_rules(ctx: InferContext) -> None:
    """The rules every op's spec declares: port count, element types (type variables bind
    across inputs), ranks. All problems of the layer at once."""
    node, spec = ctx.node, ctx.spec
    n, lo, hi = ctx.num_inputs, spec.min_inputs, spec.max_inputs
    if n < lo or (hi is not None and n > hi):
        wanted = (str(lo) if lo == hi else f"{lo} to {hi}" if hi is not None
                  else f"at least {lo}")
        ctx.error("IR303", f"the layer has {n} input port{'s' * (n != 1)}; {spec.type} takes "
                           f"{wanted}")
    problems = []
    for i in range(n):
        rule = spec.input_rule(i)
        t = ctx.input_type(i)
        types = resolve(rule.types, node.attrs)
        if isinstance(types, TypeVar):
            bound = ctx._bound.get(types.name)
            et = t.element_type
            if bound is None or bound.is_dynamic:
                if types.allows(et):
                    ctx._bound[types.name] = et
                else:
                    problems.append(("IR304", f"input {i} ({rule.name}) is {et}; it must be "
                                              f"{types.describe()}"))
            elif not et.is_dynamic and et != bound:
                first = next(j for j in range(i) if isinstance(
                    resolve(spec.input_rule(j).types, node.attrs), TypeVar) and resolve(
                    spec.input_rule(j).types, node.attrs).name == types.name)
                problems.append(("IR304", f"input {i} ({rule.name}) is {et} but input {first} "
                                          f"({spec.input_rule(first).name}) is {bound}; they "
                                          f"must have the same element type"))
        elif types is not None and not types.allows(t.element_type):
            problems.append(("IR304", f"input {i} ({rule.name}) is {t.element_type}; it must be "
                                      f"{types.describe()}"))
        if rule.rank is not None and t.shape.rank_is_static and not rule.rank.allows(len(t.shape)):
            problems.append(("IR305", f"input {i} ({rule.name}) has shape {t.shape} (rank "
                                      f"{len(t.shape)}); it must have {rule.rank.describe()}"))
    for code, message in problems:
        ctx._diags.add(code, message, node.location)
    if problems:
        raise _LayerFailed


class _KnownValues:
    """The values of a layer's inputs that inference knows: Constants, loaded only when a rule
    asks (a packed Const is unpacked when first read), and folded layers' outputs."""

    __slots__ = ("_sources", "_known")

    def __init__(self, sources: list[OutputPort], known: dict | None = None):
        self._sources = sources
        self._known = known

    def __len__(self) -> int:
        return len(self._sources)

    def __getitem__(self, i: int) -> np.ndarray | None:
        port = self._sources[i]
        node = port.node
        if node.op is not None and node.op.spec.role == "constant":
            return node.value
        return self._known.get(port) if self._known else None


def _constant_size(node: Node) -> int | None:
    """The element count of a Constant (from its shape attribute), None for other layers."""
    if node.op is None or node.op.spec.role != "constant":
        return None
    shape = node.attrs.get("shape")
    return int(np.prod(shape)) if shape is not None else None


def _small(shape: PartialShape, limit: int) -> bool:
    """Whether every tensor of this shape has at most ``limit`` elements."""
    if not shape.rank_is_static:
        return False
    n = 1
    for d in shape:
        if d.max is None:
            return False
        n *= d.max
    return n <= limit


def _boundable(t: TensorType) -> bool:
    """Whether a tensor of this type may carry bounds: small, integer or boolean."""
    et = t.element_type
    return (et.is_integral or et.kind == "boolean") and _small(t.shape, BOUND_LIMIT)


def _bound_kernel(node: Node):
    attrs = {a.name: node.attrs[a.name] for a in node.op.spec.attrs if a.name in node.attrs}
    kernel = node.op.kernel
    return (lambda *arrays: kernel(*arrays, **attrs)) if attrs else kernel


def _as_tuple(result) -> tuple:
    return result if isinstance(result, (tuple, list)) else (result,)


def _fold(node: Node, ctx: InferContext, outputs: list[TensorType], diags: Diagnostics):
    """Run the kernel on known input values; the outputs' values (and exact types), or None."""
    spec = node.op.spec
    if spec.role is not None or not spec.folds or node.op.kernel is None or node.bodies:
        return None
    if not all(_small(t.shape, FOLD_LIMIT) for t in outputs):
        return None
    for port in node.inputs:  # every input known? (before loading any constant)
        size = _constant_size(port.source.node)
        if size is None and port.source not in ctx._values._known or \
                size is not None and size > FOLD_LIMIT:
            return None
    arrays = [ctx.input_value(i) for i in range(len(node.inputs))]
    try:
        results = _as_tuple(_bound_kernel(node)(*arrays))
    except OpError as e:  # the run would fail the same way: say so now
        diags.add(e.code or "IR308", str(e), node.location)
        return None
    except Exception:  # noqa: BLE001 - a kernel that cannot run here is run when called
        return None
    if len(results) != len(outputs):
        return None
    typed = []
    for value, t in zip(results, outputs):
        value = np.asarray(value)
        try:
            et = et_table.from_dtype(value.dtype)
        except KeyError:
            return None
        if (not t.element_type.is_dynamic and et != t.element_type) \
                or not t.shape.contains(value.shape):
            return None
        typed.append(TensorType(t.element_type if not t.element_type.is_dynamic else et,
                                PartialShape(value.shape)))
    return list(results), typed


def _data_inputs(spec, attrs, output) -> set[int] | None:
    """The inputs an output's elements are copied from: those of the output's type variable,
    or input 0 when the output has its first input's type; None for an output of its own type."""
    rule = output.type
    if rule is None:
        return {0}
    if isinstance(rule, TypeVar):
        return {i for i, inp in enumerate(spec.inputs)
                if isinstance(resolve(inp.types, attrs), TypeVar)
                and resolve(inp.types, attrs).name == rule.name}
    return None


def _movement_bounds(node: Node, ctx: InferContext, outputs: list[TensorType]):
    """Data movement: the kernel run on the lower and on the upper bounds of the data inputs,
    every other input known exactly."""
    spec = node.op.spec
    if not spec.exact or node.op.kernel is None or not spec.outputs:
        return None
    data = _data_inputs(spec, node.attrs, spec.outputs[0])
    if not data:
        return None
    if spec.inputs and spec.inputs[-1].variadic is not None and len(spec.inputs) - 1 in data:
        data |= set(range(len(spec.inputs), ctx.num_inputs))  # the variadic input's repeats
    lows, highs, some = [], [], False
    for i in range(ctx.num_inputs):
        got = ctx.input_bounds(i)
        if i in data:
            if got is None:
                shape = ctx.input_shape(i)
                if not (shape.is_static and _small(shape, BOUND_LIMIT)):
                    return None
                got = bounds_rules.unbounded(shape.to_shape())
            elif ctx.input_value(i) is None:
                some = True
            lows.append(got[0])
            highs.append(got[1])
        else:
            value = ctx.input_value(i)
            if value is None:
                return None
            lows.append(value)
            highs.append(value)
    if not some:
        return None
    kernel = _bound_kernel(node)
    try:
        with np.errstate(all="ignore"):
            lo, hi = _as_tuple(kernel(*lows)), _as_tuple(kernel(*highs))
    except Exception:  # noqa: BLE001 - no bounds, then
        return None
    same = [o.type == spec.outputs[0].type for o in
            (spec.outputs[min(k, len(spec.outputs) - 1)] for k in range(len(outputs)))]
    return [(np.asarray(a, np.float64), np.asarray(b, np.float64)) if keep else None
            for a, b, keep in zip(lo, hi, same)]


def _bounds(node: Node, ctx: InferContext, outputs: list[TensorType]):
    """The outputs' bounds (a list with None where unknown), or None."""
    if not any(_boundable(t) for t in outputs):
        return None
    hook = node.op.bounds
    try:
        if hook is not None:
            return hook(ctx)
        return _movement_bounds(node, ctx, outputs)
    except OpError:
        return None


def _propagate(node: Node, ctx: InferContext, outputs: list[TensorType], values: dict,
               bounds: dict, diags: Diagnostics) -> list[TensorType]:
    """Record what is known of the values of the layer's outputs; returns the outputs' types,
    made exact where a fold gave the values."""
    folded = _fold(node, ctx, outputs, diags)
    if folded is not None:
        results, outputs = folded
        for port, value in zip(node.outputs, results):
            values[port] = value
        return outputs
    if node.op.spec.role is not None:
        return outputs
    got = _bounds(node, ctx, outputs)
    if not got:
        return outputs
    outputs = list(outputs)
    for k, (port, t, b) in enumerate(zip(node.outputs, outputs, got)):
        if b is None or not t.element_type.is_integral or not t.shape.is_static:
            continue
        lo, hi = (np.asarray(x, np.float64) for x in b)
        if lo.shape != t.shape.to_shape() or hi.shape != lo.shape or lo.size > BOUND_LIMIT:
            continue
        if np.isinf(lo).all() and np.isinf(hi).all() and lo.size:
            continue  # nothing known
        value = bounds_rules.as_values((lo, hi), t.element_type.dtype)
        if value is not None:
            values[port] = value
        else:
            bounds[port] = (lo, hi)
    return outputs


class _KnownBounds:
    __slots__ = ("_sources", "_bounds")

    def __init__(self, sources: list[OutputPort], bounds: dict):
        self._sources = sources
        self._bounds = bounds

    def __getitem__(self, i: int):
        return self._bounds.get(self._sources[i])


def infer_layer(node: Node, input_types: list[TensorType],
                input_values: list[np.ndarray | None], diags: Diagnostics,
                read_time: bool = True, ctx: InferContext | None = None) \
        -> list[TensorType] | None:
    """One layer's output types: the spec's generic rules, then the op's ``infer``. None (with
    the problems in ``diags``) when the layer breaks a rule."""
    ctx = ctx or InferContext(node, input_types, input_values, diags, read_time)
    try:
        _check_spec_rules(ctx)
        outputs = node.op.infer(ctx)
        if outputs is not None:
            problem = memory_problem(node, outputs, ctx._types, ctx.memory_limit)
            if problem is not None:
                diags.add(*problem, node.location)
                return None
        return outputs
    except _LayerFailed:
        return None
    except OpError as e:  # a shared rule or domain check called from an op's infer
        diags.add(e.code or "IR308", str(e), node.location)
        return None


def _itemsize(et: ElementType | None) -> int:
    dtype = getattr(et, "dtype", None)
    return dtype.itemsize if dtype is not None else 1


def memory_problem(node: Node, outputs: list[TensorType],
                   inputs: list[TensorType] | None = None,
                   limit: int | None = None) -> tuple[str, str] | None:
    """The memory rule, the same for every layer: (code, message) when an output of static shape
    may not be made within the memory budget (irexec/budget.py: IR109, IR114 for more dims
    than numpy holds), or when the temporaries its op declares (``OpSpec.scratch``, asked only
    when every shape is static) would take more than the budget; None when the layer fits.
    Inference applies it to every layer (so ``validate`` refuses what ``run`` would), the plan
    again under the budget in force when compiling, and the per-call checks to the shapes of
    each call where the model left them open: no kernel allocates what the budget forbids.
    ``limit``: the budget (default: the one in force)."""
    for k, t in enumerate(outputs):
        shape = t.shape
        if shape is None or not shape.is_static:
            continue
        dims = shape.to_shape()
        if limit is None:
            limit = budget.current()
        et = t.element_type
        itemsize = _itemsize(et)
        if 0 not in dims and math.prod(dims) * itemsize <= limit and len(dims) <= budget.MAX_RANK:
            continue  # the common case, in one product
        problem = budget.shape_problem(dims, itemsize, limit,
                                       None if et is None or et.is_dynamic else et)
        if problem is not None:
            port = node.outputs[k].port_id if k < len(node.outputs) else k
            return budget.problem_code(dims), f"output port {port}: {problem}"
    estimate = node.op.spec.scratch
    if estimate is None or inputs is None or not all(
            t.shape is not None and t.shape.is_static for t in (*inputs, *outputs)):
        return None
    got = estimate(node, inputs, outputs)
    if got is None:
        return None
    nbytes, what = got
    limit = budget.current() if limit is None else limit
    if nbytes <= limit:
        return None
    return budget.SIZE_CODE, (f"{what} would take {budget.describe_bytes(nbytes)} besides its "
                              f"output, more than the memory budget of "
                              f"{budget.describe(limit)}; {budget.RAISE}")


def infer_new_layer(node: Node, values: dict, bounds: dict, diags: Diagnostics,
                    make_outputs: Callable[[int], None]) -> list[TensorType] | None:
    """Infer one layer built in Python (``irexec.opsetN``) from its inputs' types, as they are
    built: ``make_outputs(n)`` adds its n output ports once inference knows n, and the known
    values and bounds of its outputs join ``values`` and ``bounds`` (keyed by output port) for
    the layers built on it. None, the problems in ``diags``, if the layer breaks a rule."""
    sources = [p.source for p in node.inputs]
    input_types = [TensorType(s.element_type, s.partial_shape) for s in sources]
    ctx = InferContext(node, input_types, _KnownValues(sources, values), diags,
                       input_bounds=_KnownBounds(sources, bounds))
    outputs = infer_layer(node, input_types, None, diags, ctx=ctx)
    if outputs is None:
        return None
    make_outputs(len(outputs))
    outputs = _propagate(node, ctx, outputs, values, bounds, diags)
    for port, t in zip(node.outputs, outputs):
        port.element_type, port.partial_shape = t.element_type, t.shape
    return outputs


def check_call(node: Node, arrays: list[np.ndarray]) -> None:
    """The spec's rules against the concrete inputs of one call, for a layer whose shapes,
    element types or checked values were not known when the model was read: the same codes and
    messages as at read time, raised as IRError."""
    types = [TensorType(et_table.from_dtype(a.dtype), PartialShape._of(tuple(
        Dimension.static(d) for d in a.shape))) for a in arrays]
    diags = Diagnostics()
    outputs = infer_layer(node, types, arrays, diags, read_time=False)
    if outputs is not None and len(outputs) != len(node.outputs):  # split lengths at run time
        _output_count(node, outputs, diags)
    errors = diags.errors
    if errors:
        raise IRError(errors)


def _output_count(node: Node, outputs: list, diags: Diagnostics) -> None:
    diags.add("IR303", f"the layer has {len(node.outputs)} output port"
                       f"{'s' * (len(node.outputs) != 1)}; {node.type} gives {len(outputs)}",
              node.location)


def _declared_matches(declared: PartialShape, inferred: PartialShape) -> bool:
    """XML dims agree with inference when each is -1 or a size the inferred dim allows (a
    static 5 inside an inferred 2..10 agrees: the file may know more than the graph says)."""
    if declared._dims == inferred._dims:
        return True  # the same dims (the common case)
    if not inferred.rank_is_static:
        return True  # OpenVINO writes no <dim> for a dynamic rank; any dims are possible
    if len(declared) != len(inferred):
        return False
    return all(d.is_dynamic or i.contains(d.min) for d, i in zip(declared, inferred))


def _port_location(node: Node, port) -> Location:
    loc = node.location
    if port.line is None:
        return loc
    return Location(loc.file, port.line, loc.layer_name, loc.layer_type, loc.layer_id,
                    port.column)


def _compare_declared(node: Node, types: dict, diags: Diagnostics) -> None:
    for port in node.inputs:
        t = types.get(port.source) if port.source is not None else None
        if port.declared is not None and t is not None and not _declared_matches(port.declared,
                                                                                 t.shape):
            diags.add("IR401", f"input port {port.port_id} declares dims {port.declared} but "
                               f"receives {t.shape} from layer '{port.source.node.name}'",
                      _port_location(node, port))
    for port in node.outputs:
        t = types.get(port)
        if (t is not None and port.precision is not None and port.precision is not t.element_type
                and not port.precision.is_dynamic
                and not t.element_type.is_dynamic and port.precision != t.element_type):
            diags.add("IR402", f"output port {port.port_id} declares precision "
                               f"{port.precision.precision} but the tensor is {t.element_type} "
                               f"({t.element_type.precision})", _port_location(node, port))
        if port.declared is not None and t is not None and not _declared_matches(port.declared,
                                                                                 t.shape):
            diags.add("IR401", f"output port {port.port_id} declares dims {port.declared} but "
                               f"inference gives {t.shape}", _port_location(node, port))


def declared_type(port: OutputPort) -> TensorType:
    """An output port's type as the XML declares it (precision and dims; dynamic where it
    says nothing): all irexec knows of a layer whose op it lacks."""
    et = port.precision if port.precision is not None else et_table.from_name("dynamic")
    shape = port.declared if port.declared is not None else PartialShape.dynamic()
    return TensorType(et, shape)


def infer_types(model: Model, diags: Diagnostics,
                parameter_types: dict[str, TensorType | PartialShape] | None = None,
                check_declared: bool = True) -> dict[OutputPort, TensorType]:
    """Infer every output port's type. ``parameter_types`` overrides Parameters' types (or just
    their shapes) by layer name, to infer for concrete inputs; the model itself is not changed."""
    types: dict[OutputPort, TensorType] = {}
    values: dict[OutputPort, np.ndarray] = {}  # known values of non-constant ports
    bounds: dict[OutputPort, tuple] = {}  # known bounds of ports whose values are not known
    overrides = parameter_types or {}
    limit = budget.current()  # the memory rule's, once for the walk
    for node in model.topological_order():
        if node.broken:
            continue  # already reported by the reader
        if node.op is None:  # an op irexec lacks: its outputs are what its ports declare
            for port in node.outputs:
                types[port] = declared_type(port)
            if check_declared:
                _compare_declared(node, types, diags)
            continue
        sources = [p.source for p in node.inputs]
        try:
            input_types = [types[s] for s in sources]
        except KeyError:
            continue  # an input failed upstream, or has no edge (already reported)
        ctx = InferContext(node, input_types, _KnownValues(sources, values), diags,
                           input_bounds=_KnownBounds(sources, bounds), memory_limit=limit)
        outputs = infer_layer(node, input_types, None, diags, ctx=ctx)
        if outputs is None:
            continue
        if node.name in overrides and node.op.spec.role == "parameter":
            given = overrides[node.name]
            outputs = [given if isinstance(given, TensorType)
                       else TensorType(outputs[0].element_type, given)]
        if len(outputs) != len(node.outputs):
            _output_count(node, outputs, diags)
            continue
        outputs = _propagate(node, ctx, outputs, values, bounds, diags)
        for port, t in zip(node.outputs, outputs):
            types[port] = t
        if check_declared:
            _compare_declared(node, types, diags)
    return types


def infer_model(model: Model) -> Diagnostics:
    """Infer and store every port's element type and partial shape on the model."""
    diags = Diagnostics()
    with gc_pause.paused():  # many small objects, none freed: see irexec/gc_pause.py
        types = infer_types(model, diags)
    for port, t in types.items():
        port.element_type = t.element_type
        port.partial_shape = t.shape
    return diags

