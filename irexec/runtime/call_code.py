"""A plan's steps written out as one Python function, for calls like one before.

The run loop (compiled_model.py ``_run``) decides for every step, on every call, what that step
needs: remembered shape arithmetic or a kernel, which per-call check (none, the full rules, the
value domains only, the sizes after the kernel), whether its first input may be written over,
one output or several, which slots to free and whether a freed array may go to the pool, a
trace, a profile. For a call whose signature matched a call that ran to the end
(``plan.call_signature``) and that neither traces nor profiles, every one of those answers but
the value-dependent ones is fixed by the plan. :class:`CallCode` writes them out once, as the
source of one function: each step is a few lines calling the plan's own kernel (attributes
bound) on the slots of a list, with only the decisions that depend on the call's values left in
it. The tiny Llama of the LLM zoo runs 198 steps per decode step, nearly all on a few kilobytes:
the loop's bookkeeping was most of a step's time.

It computes what the run loop computes, in the same order, with the same kernels: the same
arrays, bit for bit. It frees the same slots at the same steps and hands the same arrays to the
pool (constants and remembered shape arithmetic, which the pool never takes, are left in their
slots). Errors are the loop's: an OpError or MemoryError of a kernel becomes an IRError at its
layer, and any other exception of a kernel whose check was skipped runs that check for the
rule's own error. One change, made in both: a sized step (an output whose size inference could
not bound) whose non-constant inputs include a small integer tensor (a Broadcast's target shape,
computed from the call's shapes) guards the memory budget with its op's ``output_bytes`` when
the op has one, instead of the full check on every new value (see runtime/plan.py
``sized_check``). ``print(code)`` shows the source.
"""

from __future__ import annotations

from irexec.errors import OpError
from irexec.kernels import buffers
from irexec.ops.spec import same_bytes
from irexec.runtime import plan as plan_module
from irexec.runtime.loop_code import _ufunc
from irexec.runtime.plan import Plan, kernel_error


class CallCode:
    """``code(values, limit)`` runs every step of ``plan`` (``model``'s) on ``values`` (the
    slots as a run starts, inputs placed; filled in place) for a call like one before;
    ``limit``: the memory budget in force. Returns nothing: the outputs are in their slots."""

    def __init__(self, plan: Plan, model=None):
        nodes = {str(n.id): n for n in model.nodes} if model is not None else {}
        # Slots whose arrays the pool never takes (they are not the run's alone): constants, and
        # the remembered results of shape arithmetic (read-only, kept by their step).
        kept = set(plan.constants)
        for step in plan.steps:
            if step.memo is not None:
                kept.update(step.outputs)
        names: dict[str, object] = {
            "OpError": OpError, "kernel_error": kernel_error,
            "compute_memo": plan_module.compute_memo, "check_known": plan_module.check_known,
            "sized_check": plan_module.sized_check, "oversized": plan_module.oversized,
            "private": buffers.private, "MIN_BYTES": buffers.MIN_BYTES,
            "current_pool": buffers.current, "failed": self._failed, "getattr": getattr,
            "MEMO_ELEMENTS": plan_module.MEMO_ELEMENTS, "MEMO_ENTRIES": plan_module.MEMO_ENTRIES}
        self.steps = list(plan.steps)
        names["STEPS"] = self.steps
        body = []
        for j, step in enumerate(plan.steps):
            node = nodes.get(step.location.layer_id)
            if node is not None and (node.type != step.type
                                     or len(node.inputs) != len(step.inputs)):
                node = None  # a step of a fused pattern: its inputs are not the layer's
            body.append(f"        # {j}: {step.type} {step.layer!r}")
            if step.memo is not None:
                body += _memo_lines(step, j, node, names)
            else:
                body += _kernel_lines(step, j, node, names)
            if len(step.outputs) == 1:
                body.append(f"        v[{step.outputs[0]}] = r")
            else:
                body += [f"        v[{o}] = r[{k}]" for k, o in enumerate(step.outputs)]
            body.append("        r = None")
            for s in step.free:
                if s in kept:
                    continue  # a constant or a remembered array stays where it is
                if step.memo is not None:
                    body.append(f"        v[{s}] = None")
                    continue
                body += [f"        x = v[{s}]",
                         f"        v[{s}] = None",
                         "        if x is not None and x.nbytes >= MIN_BYTES:",
                         "            give(x, 1)",
                         "        x = None"]
        if not plan.steps:
            body.append("        pass")
        head = ["def run(v, limit):",
                "    give = current_pool().give",
                "    at = -1",
                "    a = None",
                "    try:"]
        tail = ["    except (OpError, MemoryError) as e:",
                "        if at < 0:",
                "            raise",
                "        raise kernel_error(e, STEPS[at].location) from None",
                "    except Exception:",
                "        if at >= 0:",
                "            failed(STEPS[at], v, a)",
                "        raise"]
        self.source = "\n".join(head + body + tail) + "\n"
        exec(compile(self.source, "<plan steps>", "exec"), names)
        self._run = names["run"]

    def __call__(self, values: list, limit: int) -> None:
        self._run(values, limit)

    @staticmethod
    def _failed(step, values: list, args) -> None:
        """A kernel raised what is not an OpError: a check skipped for a like signature says
        why, with the rule's own error (the run loop's ``except Exception``; for shape
        arithmetic, ``plan.compute_memo``'s)."""
        if step.checked is not None or step.memo is not None and step.check is not None:
            if args is None:
                args = [values[i] for i in step.inputs]
            step.check(args)

    def __str__(self) -> str:
        return self.source


def _memo_lines(step, j: int, node, names: dict) -> list[str]:
    """Remembered shape arithmetic: the key written out, the remembered result or the step
    computed (its value domains checked) and remembered, as ``plan.compute_memo`` and
    ``plan.remember`` do (written out for a step of one output; an element-wise one calls its
    ufunc where the spec names one, as ``_kernel_lines``: the same values, in new memory)."""
    names[f"S{j}"] = step
    names[f"M{j}"] = step.memo
    ufunc = _ufunc(step, node) if node is not None else None
    names[f"K{j}"] = ufunc or step.kernel
    args = "[" + ", ".join(f"v[{i}]" for i in step.inputs) + "]"
    parts = []
    for i in step.memo_args:  # as Step.memo_key
        x = f"v[{step.inputs[i]}]"
        parts.append(f"({x}.shape, {x}.dtype.str)" if step.memo_by_shape
                     else f"({x}.shape, {x}.dtype.str, {x}.tobytes())")
    key = "(" + "".join(p + ", " for p in parts) + ")"
    lines = ["        at = -1",
             f"        key = {key}",
             f"        r = M{j}.get(key)",
             "        if r is None:"]
    if len(step.outputs) != 1:
        return lines + [f"            r = compute_memo(S{j}, {args}, key, True)"]
    lines.append(f"            a = {args}")
    if step.check is not None and step.check_values is not None:
        lines.append(f"            check_known(S{j}, a)")
    return lines + [f"            at = {j}",
                    f"            r = K{j}(*a)",
                    "            at = -1",
                    "            if r.size <= MEMO_ELEMENTS:  # plan.remember",
                    "                r.setflags(write=False)",
                    f"                if len(M{j}) >= MEMO_ENTRIES:",
                    f"                    M{j}.clear()",
                    f"                M{j}[key] = r",
                    "            a = None"]


def _kernel_lines(step, j: int, node, names: dict) -> list[str]:
    """A step that runs its kernel: the check of a call like one before, the kernel (over its
    first input when nothing else can see it), the outputs' sizes after it."""
    ins = [f"v[{i}]" for i in step.inputs]
    args = "[" + ", ".join(ins) + "]"
    names[f"K{j}"] = step.kernel
    # The kernel itself, or numpy's ufunc where the spec says the kernel is one call of it for
    # the layer's types (as the loop fast path, runtime/loop_code.py): for a result small
    # enough that the kernel would not draw it from the pool (same values, in new memory).
    call = f"K{j}(*a)"
    ufunc = _ufunc(step, node) if node is not None else None
    if ufunc is not None:
        names[f"U{j}"] = ufunc
        call = f"(U{j}(*a) if a[0].nbytes < MIN_BYTES else K{j}(*a))"
    lines = []
    after = None  # what to check once the kernel ran
    if step.check is not None:
        names[f"S{j}"] = step
        lines += ["        at = -1", f"        a = {args}"]
        if step.sized:
            candidates = _small_candidates(step, node)
            if candidates:
                names[f"C{j}"] = candidates
                lines += [f"        held = sized_check(S{j}, a, limit, C{j})"]
                after = "held"
            else:  # no input can be a small integer tensor: the run loop's other branch
                if step.check_values is not None:
                    lines.append(f"        check_known(S{j}, a)")
                after = "always"
        elif step.check_values is not None:
            lines.append(f"        check_known(S{j}, a)")
    if step.in_place is not None:
        names[f"P{j}"] = step.in_place
        first = step.inputs[0]
        if step.check is None:
            lines.append(f"        a = {args}")
        lines += [f"        at = {j}",
                  f"        v[{first}] = None",
                  "        if private(a[0], 1):",
                  f"            r = P{j}(*a)",
                  "        else:",
                  f"            v[{first}] = a[0]",
                  f"            r = {call}"]
    elif step.check is not None or ufunc is not None:
        if step.check is None:
            lines.append(f"        a = {args}")
        lines += [f"        at = {j}", f"        r = {call}"]
    else:
        lines += [f"        at = {j}", f"        r = K{j}({', '.join(ins)})"]
    if after is not None:
        outs = "(r,)" if len(step.outputs) == 1 else "r"
        test = "held" if after == "held" else "True"
        if len(step.outputs) == 1:
            test = ("" if after == "always" else "held and ") + "getattr(r, 'nbytes', 0) > limit"
        lines += [f"        if {test}:",
                  "            at = -1",
                  f"            oversized(S{j}, {outs}, a, limit)"]
    lines.append("        a = None")
    return lines


def _small_candidates(step, node) -> tuple[int, ...]:
    """The inputs of a sized step that may hold a small integer tensor: those not constants of
    the plan whose element type is an integer, boolean or dynamic one (all of them when the
    layer's types are not at hand); none for an op whose output holds its first input's
    elements (its size is checked after the kernel, which allocates nothing larger)."""
    if node is None:
        return step.memo_args
    if node.op.spec.output_bytes is same_bytes:
        return ()  # its output holds its data's elements: the sizes after the kernel suffice
    found = []
    for i in step.memo_args:
        et = node.inputs[i].source.element_type
        dtype = getattr(et, "dtype", None)
        if et is None or et.is_dynamic or dtype is None or dtype.kind in "iub":
            found.append(i)
    return tuple(found)


