"""Compile a model into a flat plan: a list of Steps over numbered slots.

A plan is the narrow artifact between the graph and execution: no networkx, no XML, no attribute
strings past this point. Each Step names its kernel (attributes already bound), the slots it reads
and writes, and the slots nobody reads afterwards, which the run loop frees at once so that peak
memory stays near the largest live set. Constants are resolved once, when the plan is built.
``print(plan)`` shows it.

Constant subgraphs are folded here, once: a layer whose inputs are all constants (Constants, or
layers folded before it) runs when the plan is built and becomes a constant. Shape arithmetic --
layers fed only by ShapeOf (or another op that reads shapes only), constants and other such
layers -- remembers its last results by its inputs: a model whose only dynamic part is the batch
runs it once per new input shape, and later calls take the remembered arrays (read-only, so no
kernel writes over them).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from irexec import budget, gc_pause
from irexec.errors import InternalError, IRError, OpError
from irexec.infer import check_call, memory_problem
from irexec.ir.element_type import ElementType, from_dtype
from irexec.ir.model import Model, OutputPort
from irexec.ir.shape import PartialShape
from irexec.ops.spec import TensorType
from irexec.kernels import state
from irexec.ops.spec import resolve
from irexec.runtime import fusion
from irexec.runtime.precise import needs_widening
from irexec.runtime.precise import wrap as precise_kernel
from irexec.diagnostics.diagnostic import Location


@dataclass(frozen=True)
class Step:
    layer: str
    type: str
    kernel: Callable[..., np.ndarray]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    free: tuple[int, ...]
    location: Location
    # A variant of the kernel that writes over its first input (attributes bound), when that
    # input dies at this step; the run loop calls it if nothing else can see the array.
    in_place: Callable[..., np.ndarray] | None = None
    # ``check(arrays)``: the spec's rules against this call's inputs, for a layer whose shapes,
    # element types or checked values were not all known when the model was read.
    check: Callable[[list], None] | None = None
    # Shape arithmetic: the results by this step's inputs (see the module's docstring), and
    # whether the key is the inputs' shapes (an op that reads shapes only) or their values.
    memo: dict | None = None
    memo_by_shape: bool = False
    # The inputs that are not constants of the plan: the key of shape arithmetic reads these
    # (constants never change), and so does a sized step's test for small integer inputs.
    memo_args: tuple[int, ...] = ()
    # The signatures (see ``signature``) whose check has passed; None: checked on every call.
    checked: set | None = None
    # Inputs whose values the check reads (a value domain): part of the key by their exact
    # values when small, else the check runs on every call.
    valued: tuple[int, ...] = ()
    # ``check_values(args)``: those inputs' domain checks alone (OpError), for a call like one
    # before (see ``call_signature``).
    check_values: Callable[[list], None] | None = None
    # An output whose size inference could not bound within the memory budget: a skipped
    # check (a call like one before) is made up for by the outputs' sizes (``oversized``).
    sized: bool = False
    # ``output_bytes(args)``: the op's bound on its outputs' bytes for these inputs (OpSpec
    # ``output_bytes``, attributes bound), which guards the memory budget of a sized step
    # whose small integer inputs changed (``sized_check``); None: the op has none.
    output_bytes: Callable[[list], int] | None = None

    def memo_key(self, args: list) -> tuple:
        if self.memo_by_shape:
            return tuple([(args[i].shape, args[i].dtype.str) for i in self.memo_args])
        return tuple([(args[i].shape, args[i].dtype.str, args[i].tobytes())
                      for i in self.memo_args])

    def __str__(self) -> str:
        ins = ", ".join(f"%{i}" for i in self.inputs)
        outs = ", ".join(f"%{o}" for o in self.outputs)
        freed = f"   free {', '.join(f'%{f}' for f in self.free)}" if self.free else ""
        over = f"   may write over %{self.inputs[0]}" if self.in_place is not None else ""
        checked = "   checked per call" if self.check is not None else ""
        memo = "   once per input shape" if self.memo is not None else ""
        return f"{outs} = {self.type}({ins})   # {self.layer}{freed}{over}{checked}{memo}"


def _share_constants(theirs: dict[int, np.ndarray], ours: dict[int, np.ndarray]) -> None:
    """The traced plan's constants that equal this plan's in the same slot (the same model
    planned twice numbers its slots alike): this plan's arrays, so that the copy made by
    planning again (folded layers, decompressed weights) is not kept as well."""
    for s, array in list(theirs.items()):
        mine = ours.get(s)
        if mine is None or mine is array or mine.shape != array.shape \
                or mine.dtype != array.dtype or mine.dtype.kind not in "biufc" \
                or not (mine.flags.c_contiguous and array.flags.c_contiguous):
            continue
        a, b = mine.reshape(-1).view(np.uint8), array.reshape(-1).view(np.uint8)
        step = 1 << 20
        if all(np.array_equal(a[i:i + step], b[i:i + step]) for i in range(0, a.size, step)):
            theirs[s] = mine


@dataclass(frozen=True)
class InputSlot:
    name: str  # the Parameter's layer name
    layer_id: int
    names: tuple[str, ...]  # every name it answers to: layer name and tensor names
    element_type: ElementType
    shape: PartialShape
    slot: int
    location: Location


@dataclass(frozen=True)
class OutputSlot:
    name: str
    layer_id: int  # the Result's
    slot: int
    element_type: ElementType
    shape: PartialShape
    copy: bool  # the array is not the caller's alone (an input, a constant, another output)


@dataclass
class Plan:
    num_slots: int
    inputs: list[InputSlot]
    constants: dict[int, np.ndarray]
    steps: list[Step]
    outputs: list[OutputSlot]
    # Layers with sub-graphs and the dict their kernel reads its bodies from (``bodies=``),
    # filled with a runner per body by whoever runs the plan (runtime/compiled_model.py).
    bodies: list[tuple[object, dict]] = field(default_factory=list)
    # For traces only: the layers folded into constants, each with the number of steps that
    # run before it, and the Constant layers by slot (a trace computes the folded layers again
    # rather than the plan keeping every intermediate value).
    folded: list[tuple[int, Step]] = field(default_factory=list)
    constant_nodes: dict[int, object] = field(default_factory=dict)
    # The call signatures (``call_signature``) of calls that ran to the end: a call with one of
    # them skips the per-call checks of steps whose rules read no values (bounded).
    seen_calls: set = field(default_factory=set)
    # The steps as closures for calls like one before (runtime/call_code.py),
    # made at the first such call.
    call_code: object = None
    # Where steps run several layers (runtime/fusion.py): how to plan the same model one step
    # per layer, as traces need (``traced``).
    unfused: Callable[[], Plan] | None = None
    _traced: Plan | None = field(default=None, repr=False)

    def traced(self) -> Plan:
        """The plan a traced call runs: this one, or where fusion merged layers into one step,
        the model planned one step per layer (made when first asked for; its layers with
        bodies run the same body runners as this plan's)."""
        if self.unfused is None:
            return self
        plan = self._traced
        if plan is None:
            plan = self.unfused()
            for (_, theirs), (_, ours) in zip(plan.bodies, self.bodies):
                theirs.update(ours)
            _share_constants(plan.constants, self.constants)
            self._traced = plan
        return plan

    @functools.cached_property
    def initial_values(self) -> list:
        """The slots as a run starts: the constants in theirs, None elsewhere (a run copies
        this list rather than placing each constant again)."""
        values: list = [None] * self.num_slots
        for s, array in self.constants.items():
            values[s] = array
        return values

    def __str__(self) -> str:
        lines = [f"plan: {self.num_slots} slots, {len(self.steps)} steps"]
        lines += [f"  %{i.slot} = input {i.name!r} {i.element_type}{i.shape}" for i in self.inputs]
        lines += [f"  %{s} = constant {from_dtype(a.dtype)}{PartialShape(a.shape)}"
                  for s, a in self.constants.items()]
        lines += [f"  folded when compiling: {step.type} {step.layer!r}"
                  for _, step in self.folded]
        lines += [f"  {step}" for step in self.steps]
        lines += [f"  output {o.name!r} = %{o.slot}" for o in self.outputs]
        return "\n".join(lines)


def _unread_kernel(node):
    """The op's kernel for the outputs of this layer that nothing reads, if it has one."""
    if len(node.outputs) < 2:
        return None
    make = node.op.spec.skip_unread
    unread = frozenset(i for i, p in enumerate(node.outputs) if not p.consumers)
    return make(unread) if make is not None and unread else None


def _bind(node, kernel=None, bodies: dict | None = None) -> Callable[..., np.ndarray]:
    kernel = kernel or _unread_kernel(node) or node.op.kernel
    if kernel is None:
        raise InternalError(f"{node.type} has no kernel")
    attrs = {a.name: node.attrs[a.name] for a in node.op.spec.attrs if a.name in node.attrs}
    if bodies is not None:
        attrs["bodies"] = bodies
    if node.op.spec.keeps_state:
        attrs["state"] = state.LayerState()
    return functools.partial(kernel, **attrs) if attrs else kernel


def _bounded(port, limit: int) -> bool:
    """Whether every tensor the output port may hold fits the memory budget, as inference
    knows its shape: static (checked when the model was read and compiled), or bounded in
    every dim within the budget."""
    shape = port.partial_shape
    if shape is None or not shape.rank_is_static:
        return False
    if shape.is_static:
        return True
    et = port.element_type
    size = et.dtype.itemsize if et is not None and et.dtype is not None else 1
    for d in shape:
        if d.max is None:
            return False
        size *= d.max
    return size <= limit


def _output_bytes(node) -> Callable[[list], int] | None:
    """The op's ``output_bytes`` bound for this layer, as a function of the call's arrays."""
    bound = node.op.spec.output_bytes
    if bound is None:
        return None
    attrs = {a.name: node.attrs[a.name] for a in node.op.spec.attrs if a.name in node.attrs}
    return lambda args: bound(*args, **attrs)


def _checked_values(node) -> tuple[int, ...]:
    """The inputs, not Constants, whose values the per-call check reads (a value domain)."""
    found = []
    for i, port in enumerate(node.inputs):
        rule = node.op.spec.input_rule(i)
        if rule is not None and rule.domain is not None \
                and port.source.node.op.spec.role != "constant":
            found.append(i)
    return tuple(found)


def _value_checker(node, valued: tuple[int, ...]):
    """The domain checks of the inputs ``valued`` of a layer, as one function of the call's
    arrays (raises OpError)."""
    if not valued:
        return None
    attrs = node.attrs
    domains = [(i, resolve(node.op.spec.input_rule(i).domain, attrs)) for i in valued]
    domains = [(i, d) for i, d in domains if d is not None]

    def check_values(args: list) -> None:
        for i, domain in domains:
            domain.check(args[i], args[domain.of].shape, attrs)
    return check_values


def _unbounded(node, limit: int) -> bool:
    """Whether an output's size comes from the call's values (see ``_bounded``)."""
    return not node.bodies and not all(_bounded(p, limit) for p in node.outputs)


def _needs_check(node, limit: int) -> bool:
    """Whether the spec's rules could not all be decided when the model was read: an input of
    dynamic element type or shape, a value-checked input (one with a value domain) that is
    not a Constant, an input whose values the op's rules asked for and did not get, or an
    output whose size inference could not bound within the memory budget (``limit``; its size
    comes from values, checked per call). A layer with bodies is checked inside them, per
    iteration (its kernel holds what it gathers to the budget)."""
    if node.values_unknown or _unbounded(node, limit):
        return True
    for i, port in enumerate(node.inputs):
        source = port.source
        et, shape = source.element_type, source.partial_shape
        if et is None or et.is_dynamic or shape is None or not shape.is_static:
            return True
        rule = node.op.spec.input_rule(i)
        if rule is not None and rule.domain is not None and source.node.op.spec.role != "constant":
            return True
    return False


def _check_memory(node, limit: int) -> None:
    """The memory rule (irexec/infer.py ``memory_problem``) under the budget in force now: the
    model may have been read under a larger one. Static shapes are checked here once, never
    per call."""
    outputs = [TensorType(p.element_type, p.partial_shape) for p in node.outputs]
    inputs = [TensorType(p.source.element_type, p.source.partial_shape) for p in node.inputs
              if p.source is not None] if node.op.spec.scratch is not None else None
    problem = memory_problem(node, outputs, inputs, limit)
    if problem is not None:
        raise IRError.make(*problem, node.location)


def compile_plan(model: Model, precise: bool = False, decompression: str = "fused",
                 fuse: bool = True) -> Plan:
    """``precise``: float layers compute in float64 (irexec/runtime/precise.py).
    ``decompression``: how weight-decompression patterns compute (irexec/runtime/fusion.py).
    ``fuse``: patterns of layers run as one step each (fusion.py's fused steps; never in
    precise mode)."""
    with gc_pause.paused():  # planning frees nothing: see irexec/gc_pause.py
        plan = _compile_plan(model, precise, decompression, fuse and not precise)
    if fusion.fused_names(plan):
        plan.unfused = functools.partial(compile_plan, model, precise, decompression, False)
    return plan


def output_names(model: Model) -> list[str]:
    """Each Result's output name, unique (``Model.unique_output_names``)."""
    return model.unique_output_names()


def _compile_plan(model: Model, precise: bool = False, decompression: str = "fused",
                  fuse: bool = False) -> Plan:
    needed = model.needed_nodes([n.id for n in model.nodes
                                 if n.op is not None and n.op.spec.role == "sink"])
    order = [n for n in model.topological_order() if n.id in needed]
    # Weight decompressions computed as OpenVINO's plugins compute them (runtime/fusion.py):
    # by the pattern's last layer, from its Consts; the layers inside are not computed.
    patterns = {} if decompression == "ir" else fusion.decompressions(order)
    if decompression == "fused" and \
            sum(d.nbytes for d in patterns.values()) > budget.current():
        decompression = "per-call"  # the f32 weights would not fit: keep the compressed ones
    fused = {d.root.node.id: d for d in patterns.values()}
    skipped = fusion.inside(patterns.values())
    slot_of: dict[OutputPort, int] = {}

    def slot(port: OutputPort) -> int:
        if port not in slot_of:
            slot_of[port] = len(slot_of)
        return slot_of[port]

    inputs, constants, steps, outputs, bodies = [], {}, [], [], []
    writers = []  # per step: the spec's in-place variant, bound, or None
    folded: set[OutputPort] = set()  # ports whose values are constants of the plan
    folded_steps: list[tuple[int, Step]] = []
    constant_nodes = {}
    shaped: set[OutputPort] = set()  # ports whose values follow from input shapes alone
    # Slots whose array may be (a view of) a Parameter's or a Constant's, or of an array the plan
    # keeps between calls (folded, memoized): the caller gets a copy (the spec's
    # ``returns_view``).
    borrowed: set[int] = set()
    limit = budget.current()
    for node in order:
        spec = node.op.spec
        role = spec.role
        if role is None:
            _check_memory(node, limit)
        if role == "parameter":
            port = node.outputs[0]
            inputs.append(InputSlot(node.name, node.id, (node.name, *port.names),
                                    port.element_type, port.partial_shape, slot(port),
                                    node.location))
            borrowed.add(slot(port))
        elif role == "constant":
            constants[slot(node.outputs[0])] = node.value
            constant_nodes[slot(node.outputs[0])] = node
            folded.add(node.outputs[0])
        elif role != "result":
            sources = [p.source for p in node.inputs]
            if node.id in skipped:  # computed by its pattern's last layer; traces only
                folded_steps.append((len(steps), Step(
                    node.name, node.type, _bind(node), tuple(slot(s) for s in sources),
                    tuple(slot(p) for p in node.outputs), (), node.location)))
                continue
            pattern = fused.get(node.id)
            if pattern is not None:
                leaves = tuple(slot(p) for p in pattern.leaves)
                if decompression == "per-call":
                    steps.append(Step(node.name, node.type, pattern, leaves,
                                      (slot(pattern.root),), (), node.location))
                    writers.append(None)
                    continue
                constants[slot(pattern.root)] = pattern.compute(
                    *[constants[slot(p)] for p in pattern.leaves])
                folded.add(pattern.root)
                folded_steps.append((len(steps), Step(node.name, node.type, pattern, leaves,
                                                      (slot(pattern.root),), (),
                                                      node.location)))
                continue
            if (spec.returns_view and sources
                    and (slot(sources[0]) in borrowed or sources[0] in folded
                         or sources[0] in shaped)):
                borrowed.update(slot(p) for p in node.outputs)
            check = functools.partial(check_call, node) if _needs_check(node, limit) else None
            runners = None
            if node.bodies:
                runners = {}
                bodies.append((node, runners))
            kernel = _bind(node, bodies=runners)
            widened = precise and needs_widening(node)  # precise mode: in float64
            if widened:
                kernel = precise_kernel(node, kernel)
            if spec.folds and spec.role is None and not node.bodies \
                    and node.op.kernel is not None and node.inputs \
                    and all(s in folded for s in sources):
                for port, value in zip(node.outputs, _fold(node, kernel, [
                        constants[slot(s)] for s in sources], check)):
                    constants[slot(port)] = value
                    folded.add(port)
                folded_steps.append((len(steps), Step(
                    node.name, node.type, kernel, tuple(slot(s) for s in sources),
                    tuple(slot(p) for p in node.outputs), (), node.location)))
                continue
            memo = spec.folds and spec.role is None and not node.bodies and (
                spec.reads_shapes_only or sources and all(s in folded or s in shaped
                                                          for s in sources))
            if memo:
                shaped.update(node.outputs)
            steps.append(Step(node.name, node.type, kernel,
                              tuple(slot(p.source) for p in node.inputs),
                              tuple(slot(p) for p in node.outputs), (), node.location,
                              check=check, memo={} if memo else None,
                              memo_by_shape=spec.reads_shapes_only,
                              memo_args=tuple(i for i, s in enumerate(sources)
                                              if s not in folded),
                              checked=set() if check is not None and not memo else None,
                              valued=_checked_values(node),
                              check_values=_value_checker(node, _checked_values(node)),
                              sized=check is not None and _unbounded(node, limit),
                              output_bytes=_output_bytes(node)))
            writer = None if widened else spec.in_place
            writers.append(_bind(node, writer) if writer is not None and node.inputs else None)
    if fuse:  # patterns of layers, each made one step (runtime/fusion.py)
        steps, writers = fusion.fuse_steps(order, steps, writers)
        steps, writers = fusion.grouped_attention(order, steps, writers)
        steps = fusion.kv_appends(order, steps)  # a KV cache appended in place
    # Constants only folded layers read are not needed any more.
    read = {s for st in steps for s in st.inputs} | {slot(r.inputs[0].source)
                                                     for r in model.results}
    constants = {s: a for s, a in constants.items() if s in read}
    kept = set()
    for result, name in zip(model.results, output_names(model)):
        port = result.inputs[0].source
        s = slot(port)
        # The caller owns each output: hand out a copy of a Parameter's or Constant's array
        # (or a view of one), and of a value a second Result also returns.
        shared = s in kept or port.node.op.spec.role in ("parameter", "constant") \
            or port in folded or port in shaped or s in borrowed
        kept.add(s)
        outputs.append(OutputSlot(name, result.id, s, port.element_type, port.partial_shape,
                                  shared))
    # Free each slot right after the last step that reads it (outputs are never freed).
    last_use: dict[int, int] = {}
    for i, step in enumerate(steps):
        for s in step.inputs:
            last_use[s] = i
        for s in step.outputs:
            last_use.setdefault(s, i)  # an output nobody reads dies at once
    frees: dict[int, list[int]] = {}
    for s, i in last_use.items():
        if s not in kept:
            frees.setdefault(i, []).append(s)
    steps = [dataclasses.replace(
        st, free=tuple(sorted(frees.get(i, ()))),
        in_place=writer if (writer is not None and st.inputs[0] in frees.get(i, ())
                            and st.inputs.count(st.inputs[0]) == 1
                            and st.memo is None) else None)
             for i, (st, writer) in enumerate(zip(steps, writers))]
    return Plan(len(slot_of), inputs, constants, steps, outputs, bodies, folded_steps,
                constant_nodes)


CHECKED_ENTRIES = 256  # signatures remembered per checked step
SMALL_VALUES = 64  # integer inputs up to this size are part of a signature by their values


def signature(args: list) -> tuple:
    """What a step's per-call check depends on, up to the sizes: each input's element type,
    rank and dims, and the values of small integer inputs (shapes, axes, lengths computed at
    run time), with every size of 2 or more alike (0, 1 and negative values as they are: they
    change what a rule means: empty, broadcast, counted from the end; for a tensor of rank 2 or
    more, the distinct values: ``_alike_values``). A model whose KV cache grows by one position
    per call keeps its signatures: its layers are inferred on the first calls only."""
    return tuple([(a.dtype.str, tuple([d if d < 2 else 2 for d in a.shape]),
                   _alike_values(a) if a.size <= SMALL_VALUES and a.dtype.kind in "iub"
                   else None)
                  for a in args])


def _alike_values(a: np.ndarray) -> tuple:
    """A small integer tensor's values for a signature, from 2 up alike: position by position
    for a scalar or vector (a shape, axes, a length: what rules read by position); for a tensor
    of higher rank (token ids, an attention mask) the distinct values, so that one growing by a
    position per call keeps its signature."""
    if a.size == 1:  # a token, a position, a beam index: one value either way
        v = a.item()
        return (v if v < 2 else 2,)
    values = [v if v < 2 else 2 for v in a.reshape(-1).tolist()]
    return tuple(values) if a.ndim <= 1 else tuple(sorted(set(values)))


def call_signature(inputs, variables: dict) -> tuple:
    """A call's signature, up to the sizes (as ``signature``): its inputs' and its variables'
    element types and dims, and the values of small integer inputs. An LLM's decode steps all
    have one: the KV cache and the attention mask grow, their classes do not. The variables
    in the dict's order (the order the model's Assigns write them: another order is only
    another signature, checked once more)."""
    return signature(list(inputs)), tuple([
        (name, a.dtype.str, tuple([d if d < 2 else 2 for d in a.shape]))
        for name, a in variables.items()])


def remember_call(plan: Plan, key: tuple) -> None:
    if len(plan.seen_calls) >= CHECKED_ENTRIES:
        plan.seen_calls.clear()
    plan.seen_calls.add(key)


def check_known(step: Step, args: list) -> None:
    """A step's check in a call like one before: only the domains of the inputs whose values it
    reads; the full check (for its own error) when one refuses."""
    try:
        step.check_values(args)
    except OpError:
        step.check(args)
        raise


def exact_check(step: Step, args: list) -> None:
    """A sized step's check (``Step.sized``) in a call like one before: skipped only for the
    same small integer values (a Broadcast's target shape), never for values alike."""
    key = (signature(args), tuple([a.tobytes() for a in args
                                   if a.size <= SMALL_VALUES and a.dtype.kind in "iub"]))
    if key in step.checked:
        return
    step.check(args)
    if len(step.checked) >= CHECKED_ENTRIES:
        step.checked.clear()
    step.checked.add(key)


def oversized(step: Step, outputs, args: list, limit: int | None = None) -> None:
    """After a sized step's kernel ran with its check skipped: an output past the memory
    budget (``limit``; None: the one in force) -- a shape grown within its signature, a Loop's
    doubling state -- gets the check's own IR109 from the call's inputs."""
    if limit is None:
        limit = budget.current()
    for o in outputs:
        if getattr(o, "nbytes", 0) > limit:
            step.check(args)
            return


def sized_check(step: Step, args: list, limit: int, candidates: tuple[int, ...] | None = None
                ) -> bool:
    """A sized step's check (``Step.sized``) in a call like one before; True when the outputs'
    sizes are still to be checked after the kernel (``oversized``).

    When an input that is not a constant of the plan is a small integer tensor (a Broadcast's
    target shape, computed from the call's shapes), the outputs' size may come from its values,
    and the memory budget must hold before the kernel allocates them: the op's own bound
    (``Step.output_bytes``) decides, and only a bound past the budget runs the full check (its
    IR109); an op without a bound runs the full check once per distinct value
    (``exact_check``). Otherwise the value domains only, and the sizes after the kernel. A
    rule a skipped check would have refused makes the kernel fail, and the run loop then runs
    the check for the rule's own error. ``candidates``: the inputs that may be small integer
    tensors (default: every input not a constant)."""
    small = False
    for i in step.memo_args if candidates is None else candidates:
        a = args[i]
        if a.size <= SMALL_VALUES and a.dtype.kind in "iub":
            small = True
            break
    if small:
        bound = step.output_bytes
        if bound is None:
            exact_check(step, args)
            return False
        if step.check_values is not None:
            check_known(step, args)
        if bound(args) > limit:
            step.check(args)  # IR109 (or the rule's own error)
        return False
    if step.check_values is not None:
        check_known(step, args)
    return True


def check(step: Step, args: list) -> None:
    """Run a step's per-call check, unless it passed before on a like signature (above). The
    rules a skipped check would have refused make the kernel fail (a shape mismatch numpy
    refuses); the run loop then runs the check to give the rule's own error."""
    seen = step.checked
    if seen is None:
        step.check(args)
        return
    key = signature(args)
    if step.valued:
        exact = [args[i] for i in step.valued]
        if any(a.size > SMALL_VALUES or a.dtype.kind not in "iub" for a in exact):
            step.check(args)  # a large input's values: checked every time
            return
        key = (key, tuple([a.tobytes() for a in exact]))
    if key in seen:
        return
    step.check(args)
    if len(seen) >= CHECKED_ENTRIES:
        seen.clear()
    seen.add(key)


MEMO_ENTRIES = 16  # distinct inputs remembered per shape-arithmetic step
MEMO_ELEMENTS = 1 << 16  # larger results are computed each call, not remembered


def memoized(step: Step, args: list, known: bool = False):
    """A shape-arithmetic step's result for these inputs: remembered, or computed (its check
    first; in a call like one before, only its value domains) and remembered."""
    key = step.memo_key(args)
    result = step.memo.get(key)
    if result is None:
        result = compute_memo(step, args, key, known)
    return result


def compute_memo(step: Step, args: list, key: tuple, known: bool):
    """A shape-arithmetic step's result for inputs it does not remember (``key``: theirs)."""
    if step.check is not None:
        if not known:
            step.check(args)
        elif step.check_values is not None:
            check_known(step, args)
    try:
        result = step.kernel(*args)
    except OpError as e:
        raise kernel_error(e, step.location) from None
    except Exception:
        if known and step.check is not None:  # a skipped check: its own error
            step.check(args)
        raise
    remember(step, key, result)
    return result


def remember(step: Step, key: tuple, result) -> None:
    """Keep a shape-arithmetic step's result for its inputs (read-only from now on)."""
    results = result if isinstance(result, (tuple, list)) else (result,)
    if sum(r.size for r in results) > MEMO_ELEMENTS:
        return
    for r in results:
        r.setflags(write=False)
    if len(step.memo) >= MEMO_ENTRIES:
        step.memo.clear()
    step.memo[key] = result


def kernel_error(e: BaseException, location, memory: str = "") -> IRError:
    """The IRError for a kernel's OpError (its rule's own code, as when the values are known
    at read time; IR605 without one) or MemoryError (IR605; ``memory`` adds why), at the
    layer's location."""
    if isinstance(e, MemoryError):
        return IRError.make("IR605", f"not enough memory to compute this layer{memory}: "
                                     f"{memory_error_size(e)}", location)
    return IRError.make(e.code or "IR605", str(e), location)


def memory_error_size(e: MemoryError) -> str:
    """What a MemoryError says of the allocation that failed (numpy names the array) and the
    memory budget, for IR605: the machine ran out before the budget did."""
    limit = budget.current()
    shape, dtype = getattr(e, "shape", None), getattr(e, "dtype", None)
    advice = (f"; free memory, or lower the budget (--memory-budget, {budget.ENV}) to be told "
              f"before a run starts")
    if shape is None or dtype is None:
        return f"an allocation failed; the memory budget is {budget.describe(limit)}{advice}"
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    return (f"allocating {budget.describe_bytes(nbytes)} (an array of shape {list(shape)} of "
            f"{np.dtype(dtype)}) failed; the memory budget is {budget.describe(limit)}"
            f"{advice if nbytes <= limit else ''}")


def _fold(node, kernel, arrays: list[np.ndarray], check) -> list[np.ndarray]:
    """The outputs of a layer whose inputs are all constants, computed once (read-only)."""
    try:
        if check is not None:
            check(arrays)
        result = kernel(*arrays)
    except (OpError, MemoryError) as e:
        raise kernel_error(e, node.location, " (its inputs are constants: it is computed "
                                             "once, when compiling)") from None
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    for r in results:
        r.setflags(write=False)
    return results
