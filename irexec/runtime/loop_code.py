"""The fast path of TensorIterator and Loop: a small body's iterations written out once as the
source of one Python function.

The run loop (compiled_model.py) does for every layer what a model of any size needs: it binds
the inputs by name, frees each slot when it dies and hands large arrays to the pool, writes over
an input when reference counts prove it private, traces, profiles, and returns the outputs as a
dictionary. A loop over a body of two element-wise layers on a few floats runs that thousands
of times, and the bookkeeping costs several times the body's numpy calls.

When every value a body computes is small -- each output port of the layers its plan runs
(not Parameters, Constants or layers folded into constants) has a bounded shape of fewer bytes
than the pool takes (``buffers.MIN_BYTES``), so the run loop would hand nothing to the pool --
and the run traces no body layers, :class:`LoopCode` compiles the body's plan, once,
into a function that runs all the iterations: each slot is a local variable, each step one line
calling the plan's own kernel (attributes bound), its per-call check or remembered shape
arithmetic, in the plan's order; a sliced input, the current iteration, the execution condition
and the back edges (tuple assignments between locals) are lines of the same loop, and a
concatenated output's parts are appended to a list that the layer concatenates once. What it
leaves out cannot change a value: the pool (no value reaches it), in-place kernels (the same
values, written to new memory) and a copy of an output per iteration (one copy at the end, where
the plan asks for one; nothing writes over a body's values). Errors are the run loop's: an
OpError or MemoryError of a kernel becomes an IRError at its layer. ``print(code)`` shows the
source.
"""

from __future__ import annotations

import sys

import numpy as np

from irexec import budget
from irexec.errors import OpError
from irexec.kernels import buffers, numeric
from irexec.runtime.fusion import ufunc_of
from irexec.runtime.plan import Plan, kernel_error, memoized


def small(plan: Plan, model) -> bool:
    """Whether every value the steps of ``plan`` (``model``'s) compute has a known element type
    and a bounded shape of fewer bytes than the pool takes. Parameters, Constants and layers
    folded into constants do not count: the run loop never hands those to the pool."""
    nodes = {str(n.id): n for n in model.nodes}
    for step in plan.steps:
        for port in nodes[step.location.layer_id].outputs:
            et, shape = port.element_type, port.partial_shape
            if et is None or et.is_dynamic or shape is None or not shape.rank_is_static:
                return False
            size = et.dtype.itemsize
            for d in shape:
                if d.max is None:
                    return False
                size *= d.max
            if size >= buffers.MIN_BYTES:
                return False
    return True


class LoopCode:
    """A body's iterations as one function: ``code(params, slicers, parts, count, condition,
    spend, memory, too_much, holds)`` runs them and returns ``(last, iterations)``, ``last``
    being the last iteration's values of the body Results the layer returns as they are
    ({result id: array}; None if no iteration ran).

    ``params``: the values of the body Parameters fed whole ({parameter id: array}); ``slicers``:
    one ``slicer(i) -> array`` per sliced input, in port-map order; ``parts``: one list per
    concatenated output, in port-map order, that each iteration's value is appended to;
    ``count``: the most iterations (None: no limit); ``condition``: whether to run the first;
    ``spend()``: the iteration budget's (a message once it is spent); ``memory``: the bytes the
    parts may take, ``too_much(i)`` the error to raise past them; ``holds(value)``: whether an
    execution condition's value says go on. ``runs`` counts the calls."""

    def __init__(self, plan: Plan, body):
        self.runs = 0
        slot_of_param = {s.layer_id: s.slot for s in plan.inputs}
        result_slot = {o.layer_id: o.slot for o in plan.outputs}
        copies = {o.layer_id for o in plan.outputs if o.copy}
        names: dict[str, object] = {"OpError": OpError, "kernel_error": kernel_error,
                                    "ITERATIONS": budget.ITERATIONS_CODE, "asarray": np.asarray,
                                    "memoized": memoized}
        head = ["def iterate(params, slicers, parts, count, condition, spend, memory, "
                "too_much, holds):"]
        loop = ["    while i < count and condition:",
                "        problem = spend()",
                "        if problem is not None:",
                "            raise OpError(problem, code=ITERATIONS)"]
        for s, array in plan.constants.items():
            names[f"C{s}"] = array
            head.append(f"    s{s} = C{s}")
        sliced = 0
        for m in body.inputs:
            s = slot_of_param.get(m.internal)
            if m.purpose == "current_iteration":
                if s is not None:
                    names["CURRENT"] = body.model.by_id[m.internal].attrs["element_type"].dtype
                    loop.append(f"        s{s} = asarray(i, dtype=CURRENT)")
            elif m.axis is not None:
                head.append(f"    slice{sliced} = slicers[{sliced}]")
                if s is not None:
                    loop.append(f"        s{s} = slice{sliced}(i)")
                sliced += 1
            elif s is not None:
                head.append(f"    s{s} = params[{int(m.internal)}]")
        # The steps, inside one try: ``at`` names the step whose kernel is running (-1: a check
        # or remembered shape arithmetic, whose errors are their own already).
        self.locations = []
        nodes = {str(n.id): n for n in body.model.nodes}
        loop.append("        try:")
        for step in plan.steps:
            args = ", ".join(f"s{i}" for i in step.inputs)
            outs = [f"s{o}" for o in step.outputs]
            j = len(self.locations)
            self.locations.append(step.location)
            if step.memo is not None:
                names[f"STEP{j}"] = step
                call = f"memoized(STEP{j}, [{args}])"
                loop.append("            at = -1")
            else:
                if step.check is not None:
                    names[f"CHECK{j}"] = step.check
                    head.append(f"    check{j} = CHECK{j}")
                    loop.append("            at = -1")
                    loop.append(f"            check{j}([{args}])")
                ufunc = ufunc_of(step, nodes[step.location.layer_id])
                names[f"K{j}"] = ufunc or step.kernel
                head.append(f"    k{j} = K{j}" + (f"  # numpy's {ufunc.__name__}" if ufunc else ""))
                call = f"k{j}({args})"
                loop.append(f"            at = {j}")
            if len(outs) == 1:
                loop.append(f"            {outs[0]} = {call}  # {step.type} {step.layer!r}")
            else:
                loop.append(f"            r = {call}  # {step.type} {step.layer!r}")
                loop += [f"            {o} = r[{k}]" for k, o in enumerate(outs)]
        if not plan.steps:  # a body whose Results read its Parameters or Constants
            loop.append("            pass")
        loop += ["        except (OpError, MemoryError) as e:",
                 "            if at < 0:",
                 "                raise",
                 "            raise kernel_error(e, LOCATIONS[at]) from None"]
        names["LOCATIONS"] = self.locations
        # The Results' values this iteration, before the back edges move any of them.
        kept = [m.internal for m in body.outputs if m.purpose is None and m.axis is None]
        self.kept = [(r, r in copies) for r in kept]
        loop.append(f"        last = ({''.join(f's{result_slot[r]}, ' for r in kept)})")
        concatenated = 0
        for m in body.outputs:
            if m.axis is not None:
                head.append(f"    append{concatenated} = parts[{concatenated}].append")
                value = f"s{result_slot[m.internal]}"
                loop += [f"        gathered += {value}.nbytes",
                         "        if gathered > memory:",
                         "            raise too_much(i)",
                         f"        append{concatenated}({value})"]
                concatenated += 1
        stops = next((m.internal for m in body.outputs if m.purpose == "execution_condition"),
                     None)
        if stops is not None and not _true(plan, result_slot[stops]):
            loop.append(f"        condition = holds(s{result_slot[stops]})")
        moves = [(slot_of_param[p], result_slot[r]) for r, p in body.back_edges
                 if p in slot_of_param]
        if moves:
            loop.append(f"        {', '.join(f's{p}' for p, _ in moves)} = "
                        f"{', '.join(f's{r}' for _, r in moves)}")
        loop.append("        i += 1")
        tail = ["    return last, i"]
        head += ["    last = None", "    i = 0", "    gathered = 0", "    at = -1"]
        self.source = "\n".join(head + loop + tail) + "\n"
        exec(compile(self.source, f"<loop body {body.name}>", "exec"), names)
        self._iterate = names["iterate"]

    def __call__(self, params, slicers, parts, count, condition, spend, memory, too_much,
                 holds):
        self.runs += 1
        with numeric.quiet():  # as the kernels compute (the ufuncs called directly need it)
            last, i = self._iterate(params, slicers, parts,
                                    sys.maxsize if count is None else count, condition, spend,
                                    memory, too_much, holds)
        if last is not None:
            last = {r: np.array(v) if copy else v for (r, copy), v in zip(self.kept, last)}
        return last, i

    def __str__(self) -> str:
        return self.source



def _true(plan: Plan, slot: int) -> bool:
    """Whether the slot holds a constant single true (an execution condition that never stops
    the loop, nor raises)."""
    value = plan.constants.get(slot)
    return value is not None and np.size(value) == 1 and bool(np.asarray(value).reshape(-1)[0])
