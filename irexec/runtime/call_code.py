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
from irexec.runtime import plan as plan_module
from irexec.runtime.plan import Plan, kernel_error


class CallCode:
    """``code(values, limit)`` runs every step of ``plan`` on ``values`` (the slots as a run
    starts, inputs placed; filled in place) for a call like one before; ``limit``: the memory
    budget in force. Returns nothing: the outputs are in their slots."""

    def __init__(self, plan: Plan):
        constants = set(plan.constants)
        # Slots whose arrays the pool never takes (they are not the run's alone): constants, and
        # the remembered results of shape arithmetic (read-only, kept by their step).
        kept = set(constants)
        for step in plan.steps:
            if step.memo is not None:
                kept.update(step.outputs)
        names: dict[str, object] = {
            "OpError": OpError, "kernel_error": kernel_error, "memoized": plan_module.memoized,
            "check_known": plan_module.check_known, "sized_check": plan_module.sized_check,
            "oversized": plan_module.oversized, "private": buffers.private,
            "MIN_BYTES": buffers.MIN_BYTES, "current_pool": buffers.current,
            "failed": self._failed}
        self.steps = list(plan.steps)
        names["STEPS"] = self.steps
        head = ["def run(v, limit):",
                "    give = current_pool().give",
                "    at = -1",
                "    a = None"]
        body = []
        for j, step in enumerate(plan.steps):
            ins = [f"v[{i}]" for i in step.inputs]
            args = "[" + ", ".join(ins) + "]"
            body.append(f"        # {j}: {step.type} {step.layer!r}")
            if step.memo is not None:
                names[f"S{j}"] = step
                names[f"M{j}"] = step.memo
                body.append("        at = -1")
                key = _memo_key(step)
                if key is not None:
                    body.append(f"        r = M{j}.get({key})")
                    body.append("        if r is None:")
                    body.append(f"            r = memoized(S{j}, {args}, True)")
                else:
                    body.append(f"        r = memoized(S{j}, {args}, True)")
            else:
                names[f"K{j}"] = step.kernel
                held = False
                # the per-call check of a call like one before (the run loop's branches)
                if step.check is not None:
                    names[f"S{j}"] = step
                    body.append("        at = -1")
                    body.append(f"        a = {args}")
                    if step.sized:
                        body.append(f"        if sized_check(S{j}, a, limit):")
                        body.append("            held = a")
                        held = True
                    elif step.check_values is not None:
                        body.append(f"        check_known(S{j}, a)")
                if step.in_place is not None:
                    names[f"P{j}"] = step.in_place
                    first = step.inputs[0]
                    if step.check is None:
                        body.append(f"        a = {args}")
                    body += [f"        at = {j}",
                             f"        v[{first}] = None",
                             "        if private(a[0], 1):",
                             f"            r = P{j}(*a)",
                             "        else:",
                             f"            v[{first}] = a[0]",
                             f"            r = K{j}(*a)"]
                elif step.check is not None:
                    body += [f"        at = {j}", f"        r = K{j}(*a)"]
                else:
                    body += [f"        at = {j}", f"        r = K{j}({', '.join(ins)})"]
                body.append("        a = None")
                if held:
                    body.append("        if held is not None:")
                    body.append("            at = -1")
                    outs = "(r,)" if len(step.outputs) == 1 else "r"
                    body.append(f"            oversized(S{j}, {outs}, held, limit)")
                    body.append("            held = None")
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
        if not body:
            body.append("        pass")
        head.append("    held = None")
        head.append("    try:")
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
        why, with the rule's own error (the run loop's ``except Exception``)."""
        if step.checked is not None:
            if args is None:
                args = [values[i] for i in step.inputs]
            step.check(args)

    def __str__(self) -> str:
        return self.source


def _memo_key(step) -> str | None:
    """The source of ``step.memo_key(args)`` written out (None: the step's own method)."""
    if not step.memo_by_shape:
        return None
    parts = [f"(v[{step.inputs[i]}].shape, v[{step.inputs[i]}].dtype.str)"
             for i in step.memo_args]
    return "(" + "".join(p + ", " for p in parts) + ")"
