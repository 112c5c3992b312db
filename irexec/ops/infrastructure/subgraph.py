"""What TensorIterator, Loop and If share: port maps onto a body, sliced inputs, concatenated
outputs, back edges, and a body's types under given input types.

Slicing follows OpenVINO: ``start`` and ``end`` count from the end when negative (``end=-1`` is
the last index) and both are included; an input is cut into ``(|end - start| + 1) / part_size``
parts of ``part_size`` along ``axis``, walked backwards when ``stride`` is negative; a
concatenated output puts the iterations' values back in that order.

A file decides how long its loops run, so a run is bounded (irexec/budget.py): a slice's start
and end lie within its dim, the body iterations of one outermost loop are at most
``budget.max_iterations()`` (IR115: a loop known to run more, or never to end, is refused before
it starts), and the slices a concatenated output gathers stay within the memory budget (IR109).
"""

from __future__ import annotations

import numpy as np

from irexec import budget
from irexec.errors import OpError
from irexec.ir.model import Body, PortMapping
from irexec.ir.shape import Dimension, PartialShape
from irexec.ir.shape_rules import normalize_axis
from irexec.ops.spec import TensorType


def positions(ports) -> dict[int, int]:
    """Port id -> position among the layer's inputs (or outputs)."""
    return {p.port_id: i for i, p in enumerate(ports)}


def union(a: PartialShape, b: PartialShape) -> PartialShape:
    """The smallest partial shape holding both: equal dims stay, others span both intervals;
    different ranks give a dynamic rank."""
    if not a.rank_is_static or not b.rank_is_static or len(a) != len(b):
        return PartialShape.dynamic()
    dims = []
    for x, y in zip(a, b):
        hi = None if x.max is None or y.max is None else max(x.max, y.max)
        dims.append(x if x == y else Dimension(min(x.min, y.min), hi))
    return PartialShape(dims)


def relax(a: PartialShape, b: PartialShape) -> PartialShape:
    """``a`` with every dim that differs in ``b`` made dynamic."""
    if not a.rank_is_static or not b.rank_is_static or len(a) != len(b):
        return PartialShape.dynamic()
    return PartialShape([x if x == y else Dimension.dynamic() for x, y in zip(a, b)])


def iterations(mapping: PortMapping, dim: int) -> int:
    """How many parts a sliced input of ``dim`` along the axis is cut into. OpError IR110 when
    start or end lies outside the dim (OpenVINO would read outside the tensor)."""
    start = mapping.start + dim if mapping.start < 0 else mapping.start
    end = mapping.end + dim if mapping.end < 0 else mapping.end
    if dim > 0 and not (0 <= start < dim and 0 <= end < dim):
        raise OpError(f"the port map slices axis {mapping.axis} from {mapping.start} to "
                      f"{mapping.end}, outside its {dim} elements", code="IR110")
    return (abs(end - start) + 1) // mapping.part_size


def check_count(count: int | None, what: str) -> None:
    """OpError IR115 for a loop known to run more body iterations than irexec runs (``count``
    None: known never to end)."""
    limit = budget.max_iterations()
    if count is None:
        raise OpError(f"{what} never ends: no trip count, slice or condition of the body stops "
                      f"it", code=budget.ITERATIONS_CODE)
    if count > limit:
        raise OpError(f"{what} runs {count} iterations, more than the {limit} irexec runs for "
                      f"one loop; raise {budget.ITERATIONS_ENV} if the model really needs them",
                      code=budget.ITERATIONS_CODE)


def condition_is_constant(body: Body) -> bool:
    """Whether the body's execution condition (a Loop's) cannot stop it: it has none, or a
    constant true feeds it."""
    stops = next((m.internal for m in body.outputs if m.purpose == "execution_condition"), None)
    if stops is None:
        return True
    result = body.model.by_id.get(stops)
    source = result.inputs[0].source if result is not None and result.inputs else None
    node = source.node if source is not None else None
    if node is None or node.op is None or node.op.spec.role != "constant":
        return False
    value = node.value
    return value is not None and np.size(value) == 1 and bool(np.asarray(value).reshape(-1)[0])


def sliced_type(t: TensorType, mapping: PortMapping) -> tuple[TensorType, int | None]:
    """The body Parameter's type for a sliced input, and the number of iterations (None while
    the dim is unknown)."""
    shape = t.shape
    if not shape.rank_is_static:
        return t, None
    axis = normalize_axis(mapping.axis, len(shape), "the port map's axis")
    dim = shape[axis]
    count = iterations(mapping, dim.min) if dim.is_static else None
    return TensorType(t.element_type, shape.replace(axis, Dimension.static(mapping.part_size))), \
        count


def concatenated_type(t: TensorType, mapping: PortMapping, count: int | None) -> TensorType:
    shape = t.shape
    if not shape.rank_is_static:
        return t
    if len(shape) == 0:
        shape = PartialShape([1])
    axis = normalize_axis(mapping.axis, len(shape), "the port map's axis")
    part = shape[axis]
    if count is not None and part.is_static:
        dim = Dimension.static(count * part.min)
    else:
        dim = Dimension(0, None if count is None or part.max is None else count * part.max)
    return TensorType(t.element_type, shape.replace(axis, dim))


def infer_iterated(ctx, body: Body, params: dict[int, TensorType], count: int | None):
    """Infer a TensorIterator's or Loop's body from the types of its Parameters, widening a
    back-edge Parameter's shape once when the Result feeding it comes out different; then the
    layer's output types in output-port order. ``count`` is the number of iterations when it is
    known (the body cannot stop earlier)."""
    if count is not None:
        check_count(count, f"the {ctx.node.type}")
    results = ctx.infer_body(body.name, params)
    if results is None:
        ctx.stop()
    widened = False
    for result_id, param_id in body.back_edges:
        got, had = results[result_id], params[param_id]
        if not got.element_type.is_dynamic and not had.element_type.is_dynamic \
                and got.element_type != had.element_type:
            ctx.error("IR111", f"back edge {result_id} -> {param_id}: the body gives "
                               f"{got.element_type} for {had.element_type} Parameter "
                               f"'{body.model.by_id[param_id].name}'")
        if got.shape != had.shape:
            # The value changes shape from one iteration to the next: OpenVINO makes every
            # dim that differs dynamic (a rank that differs, a dynamic rank).
            params[param_id] = TensorType(had.element_type, relax(had.shape, got.shape))
            widened = True
    if widened:
        results = ctx.infer_body(body.name, params)
        if results is None:
            ctx.stop()
    out_pos = positions(ctx.node.outputs)
    outputs: list[TensorType | None] = [None] * len(ctx.node.outputs)
    for m in body.outputs:
        if m.purpose is not None:
            continue
        t = results[m.internal]
        outputs[out_pos[m.external]] = concatenated_type(t, m, count) if m.axis is not None \
            else t
    missing = [p.port_id for p, t in zip(ctx.node.outputs, outputs) if t is None]
    if missing:
        ctx.error("IR110", f"output port {missing[0]} is not in the port map; every output of "
                           f"the layer must come from a body Result")
    return outputs


def run_iterations(arrays, run, trip: int | None = None, condition: bool = True,
                   loop: bool = False) -> tuple:
    """Run the body of a TensorIterator or Loop: at most ``trip`` times (None: until the slices
    or a Loop's execution condition end it), while ``condition`` holds. A body of small values
    runs as one compiled function (``run.loop_code()``: irexec/runtime/loop_code.py), any other
    (or in a run that traces body layers) one run-loop call per iteration; both compute the
    same values with the same kernels."""
    body = run.body
    inputs: dict[int, np.ndarray] = {}
    sliced = []
    count = trip
    current = condition_result = None
    for m in body.inputs:
        if m.purpose == "current_iteration":
            current = m.internal
            continue
        value = arrays[run.input_position[m.external]]
        if m.axis is not None:
            n = iterations(m, value.shape[m.axis % value.ndim])
            count = n if count is None else min(count, n)
            sliced.append((m, slicer(value, m)))
        else:
            inputs[m.internal] = value
    for m in body.outputs:
        if m.purpose == "execution_condition":
            condition_result = m.internal
    if count is None and not loop:  # a TensorIterator without slices: its concatenated
        # outputs say how many iterations (OpenVINO's rule), else none runs (as its reference
        # implementation, whose count stays -1)
        concat = [m for m in body.outputs if m.axis is not None and m.purpose is None]
        count = abs(concat[0].end - concat[0].start) // concat[0].part_size if concat else 0
    what = "the Loop" if loop else "the TensorIterator"
    if condition and (not loop or condition_is_constant(body)):
        check_count(count, what)  # it runs exactly count iterations: refused before it starts
    parts: dict[int, list[np.ndarray]] = {id(m): [] for m in body.outputs if m.axis is not None}
    memory = budget.current()

    def too_much(i: int) -> OpError:
        return OpError(f"the iterations' values gathered for a concatenated output pass "
                       f"{budget.describe(memory)}, the memory budget, after {i + 1} "
                       f"iterations; raise the budget with --memory-budget or {budget.ENV} if "
                       f"the machine has the memory", code=budget.SIZE_CODE)

    with budget.counting_iterations() as spend:
        fast = run.loop_code()
        if fast is not None:
            last, _ = fast(inputs, [cut for _, cut in sliced],
                           [parts[id(m)] for m in body.outputs if m.axis is not None], count,
                           condition, spend, memory, too_much, holds)
        else:
            last = _iterate(run, body, dict(inputs), sliced, parts, count, condition, current,
                            condition_result, spend, memory, too_much)
    return _outputs(arrays, run, body, inputs, parts, last)


def _iterate(run, body, inputs, sliced, parts, count, condition, current, condition_result,
             spend, memory, too_much):
    """One run-loop call of the body per iteration; the last iteration's outputs."""
    last = None
    i = 0
    gathered = 0  # bytes of the parts held for the concatenated outputs
    while (count is None or i < count) and condition:
        problem = spend()
        if problem is not None:
            raise OpError(problem, code=budget.ITERATIONS_CODE)
        for m, cut in sliced:
            inputs[m.internal] = cut(i)
        if current is not None:
            inputs[current] = np.asarray(i, dtype=run.parameter_dtype(current))
        last = run(inputs)
        for m in body.outputs:
            if m.axis is not None:
                part = last[m.internal]
                gathered += part.nbytes
                if gathered > memory:
                    raise too_much(i)
                parts[id(m)].append(part)
        for result_id, param_id in body.back_edges:
            inputs[param_id] = last[result_id]
        if condition_result is not None:
            condition = holds(last[condition_result])
        i += 1
    return last


def holds(go: np.ndarray) -> bool:
    """Whether a body's execution condition says run again; OpError IR110 unless it holds one
    value."""
    if np.size(go) != 1:
        raise OpError(f"the body's execution condition holds {np.size(go)} values; it must hold "
                      f"one", code="IR110")
    return bool(np.asarray(go).reshape(-1)[0])


def _outputs(arrays, run, body, inputs, parts, last):
    """The layer's outputs: ``inputs`` are the body Parameters' values before the first
    iteration, ``last`` the body Results' in the last (None if none ran)."""
    outputs = [None] * run.num_outputs
    back = dict(body.back_edges)
    for m in body.outputs:
        if m.purpose is not None:
            continue
        if m.axis is not None:
            values = parts[id(m)]
            if m.stride < 0:
                values = values[::-1]
            if values:
                values = [v.reshape(1) if v.ndim == 0 else v for v in values]
                out = np.concatenate(values, axis=m.axis)
            else:
                out = run.empty_concatenation(m)
        elif last is not None:
            out = last[m.internal]
        elif m.internal in back:  # never ran: the value the back edge started from
            out = inputs[back[m.internal]]
        else:
            out = run.empty_value(m)
        # An input's array, or one another output port already returns (two ports mapped to
        # one body Result), is copied: each output is the caller's alone.
        outputs[run.output_position[m.external]] = np.array(out, copy=True) \
            if any(out is a for a in arrays) or any(out is o for o in outputs) else out
    return tuple(outputs) if len(outputs) != 1 else outputs[0]


def slicer(value: np.ndarray, m: PortMapping):
    """``cut(i)``: the part of ``value`` that iteration ``i`` reads, for a sliced input (a
    view)."""
    axis = m.axis % value.ndim
    dim = value.shape[axis]
    start = m.start + dim if m.start < 0 else m.start
    size = m.part_size
    head = (slice(None),) * axis
    if m.stride > 0:
        return lambda i: value[head + (slice(start + i * size, start + i * size + size),)]
    return lambda i: value[head + (slice(start - (i + 1) * size + 1, start - i * size + 1),)]
