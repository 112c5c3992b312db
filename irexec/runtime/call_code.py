"""A plan's steps as one small function each, for calls like one before.

The run loop (compiled_model.py ``_run``) decides for every step, on every call, what that step
needs: remembered shape arithmetic or a kernel, which per-call check (none, the full rules, the
value domains only, the sizes after the kernel), whether its first input may be written over,
one output or several, which slots to free and whether a freed array may go to the pool, a
trace, a profile. For a call whose signature matched a call that ran to the end
(``plan.call_signature``) and that neither traces nor profiles, every one of those answers but
the value-dependent ones is fixed by the plan. :class:`CallCode` settles them once: each step
becomes a closure over its slots, kernel (attributes bound; or the numpy ufunc its spec names),
the check it still needs and the slots it frees, and a call runs the closures in order. The tiny
Llama of the LLM zoo runs 198 steps per decode step, nearly all on a few kilobytes: the loop's
bookkeeping was most of a step's time. (Closures, not generated source: compiling the source of
a plan of a thousand steps took longer than a thousand calls save.)

It computes what the run loop computes, in the same order, with the same kernels: the same
arrays, bit for bit. It frees the same slots at the same steps and hands the same arrays to the
pool (constants, which the pool never takes, stay in their slots). Errors are the loop's: an
OpError or MemoryError of a kernel becomes an IRError at its layer, and any other exception of
a kernel whose check was skipped runs that check for the rule's own error. One change, made in
both: a sized step (an output whose size inference could not bound) whose non-constant inputs
include a small integer tensor (a Broadcast's target shape, computed from the call's shapes)
guards the memory budget with its op's ``output_bytes`` when the op has one, instead of the full
check on every new value (see runtime/plan.py ``sized_check``). ``print(code)`` lists what each
step does.
"""

from __future__ import annotations

from operator import itemgetter

from irexec import gc_pause
from irexec.errors import OpError
from irexec.kernels import buffers
from irexec.ops.spec import same_bytes
from irexec.runtime import plan as plan_module
from irexec.runtime.fusion import ufunc_of
from irexec.runtime.plan import Plan, check_known, kernel_error, oversized, sized_check

MIN_BYTES = buffers.MIN_BYTES
private = buffers.private
UNLOOKED = 64  # calls a step of shape arithmetic that kept missing computes without its memo


class CallCode:
    """``code(values, limit)`` runs every step of ``plan`` (``model``'s) on ``values`` (the
    slots as a run starts, inputs placed; filled in place) for a call like one before;
    ``limit``: the memory budget in force. Returns nothing: the outputs are in their slots."""

    def __init__(self, plan: Plan, model=None):
        with gc_pause.paused():  # tens of thousands of closures, none freed: see gc_pause.py
            self._build(plan, model)

    def _build(self, plan: Plan, model) -> None:
        nodes = {str(n.id): n for n in model.nodes} if model is not None else {}
        constants = set(plan.constants)
        self.runs, self.lines = [], []
        for step in plan.steps:
            node = nodes.get(step.location.layer_id)
            # the layer's input types speak for a step on its inputs (another kernel of the
            # same layer: a KV cache's, runtime/fusion.py), its ufunc only for its own kernel
            typed = node if node is not None and node.type == step.type \
                and len(node.inputs) == len(step.inputs) and node.op is not None else None
            if node is not None and not _runs_layer(step, node):
                node = None  # a fused pattern's step, or a wrapped kernel: no layer's facts
            frees = tuple(s for s in step.free if s not in constants)
            if step.memo is not None:
                run, what = _memo_step(step, node, frees)
            else:
                run, what = _kernel_step(step, node, frees, typed, constants)
            self.runs.append(run)
            self.lines.append((step, what))

    def __call__(self, values: list, limit: int) -> None:
        give = buffers.current().give
        for run in self.runs:
            run(values, limit, give)

    def __str__(self) -> str:
        return "\n".join(f"{step.type} {step.layer!r}: {what() if callable(what) else what}"
                         for step, what in self.lines)


def _runs_layer(step, node) -> bool:
    """Whether ``step`` runs ``node``'s own kernel on ``node``'s inputs (attributes bound), so
    that the layer's input types and spec speak for it: not a fused pattern's step (its inputs
    are the pattern's), nor a kernel wrapped by precise mode."""
    kernel = step.kernel
    kernel = getattr(kernel, "func", kernel)  # functools.partial: attributes bound
    return (node.type == step.type and len(node.inputs) == len(step.inputs)
            and node.op is not None and kernel is node.op.kernel)


def _getter(slots: tuple[int, ...]):
    """``get(values)``: the arrays of ``slots`` as a tuple."""
    if len(slots) == 1:
        only = slots[0]
        return lambda values: (values[only],)
    if not slots:
        return lambda values: ()
    return itemgetter(*slots)


def _store(outputs: tuple[int, ...]):
    """``store(values, result)``: a kernel's result into its output slots."""
    if len(outputs) == 1:
        only = outputs[0]

        def store(values, result):
            values[only] = result
    else:
        def store(values, result):
            for s, r in zip(outputs, result):
                values[s] = r
    return store


def _memo_step(step, node, frees):
    """Remembered shape arithmetic: the key, as ``Step.memo_key``; the remembered result, or
    the step computed (its value domains checked) and remembered, as ``plan.compute_memo``
    and ``plan.remember`` do (an element-wise step calls its ufunc where the spec names one:
    the same values, in new memory)."""
    memo, get, store = step.memo, _getter(step.inputs), _store(step.outputs)
    slots = tuple(step.inputs[i] for i in step.memo_args)
    if step.memo_by_shape and len(slots) == 1:
        slot = slots[0]

        def key_of(values):
            x = values[slot]
            return ((x.shape, x.dtype.str),)
    elif len(slots) == 1:
        slot = slots[0]

        def key_of(values):
            x = values[slot]
            return ((x.shape, x.dtype.str, x.tobytes()),)
    elif step.memo_by_shape:
        def key_of(values):
            return tuple([(values[s].shape, values[s].dtype.str) for s in slots])
    else:
        def key_of(values):
            return tuple([(values[s].shape, values[s].dtype.str, values[s].tobytes())
                          for s in slots])
    single = len(step.outputs) == 1
    kernel = (ufunc_of(step, node) if node is not None else None) or step.kernel
    values_check = step.check is not None and step.check_values is not None
    location, check = step.location, step.check
    remembered_at_most = plan_module.MEMO_ELEMENTS
    entries = plan_module.MEMO_ENTRIES

    def compute(values):
        """The step's result for this call, neither looked up nor remembered."""
        args = get(values)
        if values_check:
            check_known(step, args)
        try:
            return kernel(*args)
        except OpError as e:
            raise kernel_error(e, location) from None
        except Exception:
            if check is not None:  # a skipped check: its own error
                check(list(args))
            raise

    def miss(values, key):
        args = get(values)
        if not single:
            return plan_module.compute_memo(step, list(args), key, True)
        if values_check:
            check_known(step, args)
        try:
            result = kernel(*args)
        except OpError as e:
            raise kernel_error(e, location) from None
        except Exception:
            if check is not None:  # a skipped check: its own error
                check(list(args))
            raise
        if result.size <= remembered_at_most:  # plan.remember
            result.setflags(write=False)
            if len(memo) >= entries:
                memo.clear()
            memo[key] = result
        return result

    out = step.outputs[0] if single else None
    # Shape arithmetic whose values follow a length that grows on every call (an LLM's causal
    # mask) never finds its key: after a memo's worth of misses in a row, the step computes
    # for a while without looking up or remembering (the same values), then looks again.
    streak = skipping = 0

    def run(values, limit, give):
        nonlocal streak, skipping
        if skipping:
            skipping -= 1
            result = compute(values)
        else:
            key = key_of(values)
            result = memo.get(key)
            if result is None:
                result = miss(values, key)
                streak += 1
                if streak > entries:
                    streak, skipping = 0, UNLOOKED
            else:
                streak = 0
        if single:
            values[out] = result
        else:
            store(values, result)
        for s in frees:
            values[s] = None
    return run, "remembered per " + ("input shape" if step.memo_by_shape else "input")


def _kernel_step(step, node, frees, typed=None, constants=frozenset()):
    """A step that runs its kernel: the check of a call like one before, the kernel (over its
    first input when nothing else can see it), the outputs' sizes after it, the frees (a large
    array nothing else can see goes to the pool)."""
    get, store = _getter(step.inputs), _store(step.outputs)
    kernel, in_place, location = step.kernel, step.in_place, step.location
    first = step.inputs[0] if step.inputs else None
    single = len(step.outputs) == 1
    # The check a call like one before still makes (the run loop's branches): 0 none, 1 the
    # value domains, 2 the sized test for small integer inputs (``plan.sized_check``), 3 the
    # value domains (if any) and the outputs' sizes after the kernel.
    mode, candidates = 0, ()
    if step.check is not None:
        if step.sized:
            candidates = _small_candidates(step, typed)
            mode = 2 if candidates else 3
        elif step.check_values is not None:
            mode = 1
    values_check = step.check_values is not None
    # numpy's ufunc where the spec says the kernel is one call of it for the layer's types (as
    # the loop fast path, runtime/loop_code.py), for a result too small for the pool
    ufunc = ufunc_of(step, node) if node is not None else None
    checked = step.checked is not None
    own = frees  # slots freed here; the arrays of those nothing else sees go to the pool

    out = step.outputs[0] if single else None
    only = step.inputs[0] if len(step.inputs) == 1 else None
    getattr_ = getattr

    def simple(values, limit, give):
        """The common step (one output, not in place, no check or its sizes after): the
        branches of ``run`` below it never takes, left out."""
        args = (values[only],) if only is not None else get(values)
        if values_check:
            check_known(step, args)
        try:
            if ufunc is not None and args[0].nbytes < MIN_BYTES:
                result = ufunc(*args)
            else:
                result = kernel(*args)
        except (OpError, MemoryError) as e:
            raise kernel_error(e, location) from None
        except Exception:
            if checked:
                step.check(list(args))
            raise
        if mode and getattr_(result, "nbytes", 0) > limit:
            oversized(step, (result,), args, limit)
        args = None
        values[out] = result
        result = None
        for s in own:
            value = values[s]
            values[s] = None
            if value is not None and value.nbytes >= MIN_BYTES:
                give(value, 1)
            value = None

    def run(values, limit, give):
        args = (values[only],) if only is not None else get(values)
        held = False
        if mode:
            if mode == 3:
                if values_check:
                    check_known(step, args)
                held = True
            elif mode == 2:
                held = sized_check(step, args, limit, candidates)
            else:
                check_known(step, args)
        call = kernel
        if in_place is not None:
            values[first] = None
            if private(args[0], 1):
                call = in_place
            else:
                values[first] = args[0]
        try:
            if ufunc is not None and call is kernel and args[0].nbytes < MIN_BYTES:
                result = ufunc(*args)
            else:
                result = call(*args)
        except (OpError, MemoryError) as e:
            raise kernel_error(e, location) from None
        except Exception:
            if checked:  # a check skipped for a like signature: say why
                step.check(list(args))
            raise
        if held:
            if single:
                if getattr_(result, "nbytes", 0) > limit:
                    oversized(step, (result,), args, limit)
            else:
                oversized(step, result, args, limit)
        args = None  # the frees below prove arrays unreachable by their counts
        if single:
            values[out] = result
        else:
            store(values, result)
        result = None
        for s in own:
            value = values[s]
            values[s] = None
            if value is not None and value.nbytes >= MIN_BYTES:
                give(value, 1)
            value = None

    reshaping = False
    if in_place is None and single and mode in (0, 3):
        values_check = mode == 3 and values_check
        run = simple
        if node is not None and node.op.spec.reshapes and not values_check \
                and step.inputs and all(s in constants for s in step.inputs[1:]):
            run = _reshape_step(step, simple, mode, own)
            reshaping = True

    def what() -> str:  # for print(code)
        said = ["kernel" if ufunc is None else f"numpy's {ufunc.__name__} (small results)",
                ["", "value domains", f"sized test of inputs {list(candidates)}",
                 "sizes after"][mode],
                "may write over its first input" if in_place is not None else "",
                "numpy's reshape to the dims found per shape of its data" if reshaping else ""]
        return ", ".join(w for w in said if w)
    return run, what


def _reshape_step(step, simple, mode: int, own: tuple[int, ...]):
    """A layer whose kernel is ``data.reshape(dims)``, dims fixed by data's shape and the
    layer's other inputs (``OpSpec.reshapes``), all constants here: the dims found by the
    kernel for a shape of data are used for that shape again, so the step is numpy's reshape
    (the kernel's own call, bit for bit and view for view) without the kernel reading its
    constants. A shape not met before runs ``simple``, the whole step."""
    data, out = step.inputs[0], step.outputs[0]
    dims_of: dict = {}

    def reshape(values, limit, give):
        x = values[data]
        dims = dims_of.get(x.shape)
        if dims is None:
            shape = x.shape
            x = None
            simple(values, limit, give)
            if len(dims_of) < RESHAPES_KEPT:
                dims_of[shape] = values[out].shape
            return
        result = x.reshape(dims)
        if mode and result.nbytes > limit:  # (a copy: data that was not contiguous)
            oversized(step, (result,), (x,), limit)
        x = None
        values[out] = result
        result = None
        for s in own:
            value = values[s]
            values[s] = None
            if value is not None and value.nbytes >= MIN_BYTES:
                give(value, 1)
            value = None
    return reshape


RESHAPES_KEPT = 16  # shapes of data a reshaping step remembers its dims for


def _small_candidates(step, node) -> tuple[int, ...]:
    """The inputs of a sized step that may hold a small integer tensor: those not constants of
    the plan whose element type is an integer, boolean or dynamic one (all of them when the
    layer's types are not at hand); none for an op whose output holds its first input's
    elements (its size is checked after the kernel, which allocates nothing larger)."""
    if node is None:
        return step.memo_args
    if node.op.spec.output_bytes is same_bytes:
        return ()
    found = []
    for i in step.memo_args:
        et = node.inputs[i].source.element_type
        dtype = getattr(et, "dtype", None)
        if et is None or et.is_dynamic or dtype is None or dtype.kind in "iub":
            found.append(i)
    return tuple(found)
