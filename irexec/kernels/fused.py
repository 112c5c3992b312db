"""Fused kernels: several layers' kernels run as one step of the plan (irexec/runtime/fusion.py
finds the patterns; this module knows no op).

NOTE for developers: a fused step computes what its layers compute, bit for bit. It does not
re-derive a LayerNorm or an attention: it calls each layer's own kernel (attributes bound), in
the layers' order, on the same inputs, so every rounding is the one the unfused plan makes.
What fusion saves is everything around the kernels: a turn of the run loop per layer (its
slots, checks, frees and profile), the kernels' dispatch on the element type where the layer's
kernel is one numpy ufunc for its type (the spec's ``ufunc``: the ufunc is then called
directly, as runtime/loop_code.py does), and a fresh array per layer: a value made inside the
step and read by no later layer of it is written over by the next one (the ufunc's ``out=``,
or the op's in-place variant), as the run loop does only for arrays of 64 KiB or more that it
can prove private. The memory written over is the step's own (made by a layer of the step, in a
kind of layer known to return new memory, and its reference count the step's alone), never an
input of the step.

A step whose layers' rules are checked per call (dynamic shapes) checks each layer on its own
values (``check``); that computes the chain, so the kernel called next on the same arrays
returns what the check computed instead of computing it again.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

from irexec import budget
from irexec.errors import IRError, OpError
from irexec.kernels import buffers


@dataclass(frozen=True)
class Layer:
    """One layer inside a fused step.

    ``refs``: where its inputs come from, as indexes into the step's values (the step's inputs
    first, then each layer's output in order); ``kernel``: its kernel, attributes bound;
    ``over``: its in-place variant (writes over its first input), or None; ``ufunc``: the numpy
    ufunc its kernel is for the types it sees (None: call the kernel); ``overwritable``: the
    refs (by position in ``refs``) whose value this layer may write over (made inside the step,
    read by no later layer, of the output's type); ``dead``: the values nobody reads after this
    layer (dropped at once, so memory is given back as the run loop would); ``check``: the
    layer's per-call check (the spec's rules on the arrays), or None; ``location``: the
    layer's, for the error a kernel raises (OpError: its values break the op's rules).
    """

    kernel: Callable
    refs: tuple[int, ...]
    over: Callable | None = None
    ufunc: Callable | None = None
    overwritable: tuple[int, ...] = ()
    dead: tuple[int, ...] = ()
    check: Callable | None = None
    location: object = None


class FusedKernel:
    """The kernel of a fused step: ``kernel(*inputs)`` runs ``layers`` in order and returns the
    last one's output. ``name`` says what the pattern is (``LayerNorm``, ``MatMul+Add+Gelu``
    ...): ``irexec bench --per-op`` and ``print(plan)`` show it."""

    __slots__ = ("name", "layers", "count", "sized", "_plan", "_quick")

    def __init__(self, name: str, layers: tuple[Layer, ...], count: int, sized: bool = False):
        self.name, self.layers, self.count = name, layers, count
        # Some layer's output size comes from the call's values and its check may be skipped
        # (a call like one before): a value past the memory budget is then reported by the
        # layers' checks, as the run loop reports an unfused layer's (runtime/plan.py).
        self.sized = sized
        self._plan = tuple((layer.kernel, layer.refs, layer.over, layer.ufunc,
                            layer.overwritable, layer.dead, layer.location) for layer in layers)
        # (the function to call: the ufunc or the kernel; its one input's ref, or a getter of
        # its inputs from the step's values)
        self._quick = tuple((layer.ufunc if layer.ufunc is not None else layer.kernel,
                             layer.refs[0] if len(layer.refs) == 1 else None,
                             itemgetter(*layer.refs) if len(layer.refs) > 1 else None)
                            for layer in layers)

    def __call__(self, *inputs):
        last = _CHECKED.last
        if last is not None:  # the check just computed this call's result: see ``check``
            _CHECKED.last = None
            kernel, held, result = last
            if kernel is self and len(held) == len(inputs) \
                    and all(a is b for a, b in zip(held, inputs)):
                return result
            last = kernel = held = result = None
        _CHECKED.ran = (self, tuple(map(id, inputs)))
        values = list(inputs)
        if getattr(inputs[0], "nbytes", _QUICK_BYTES) < _QUICK_BYTES:
            # Small values (a decode step's): nothing worth writing over or giving back to the
            # pool; the same kernels in the same order, without the bookkeeping.
            sized = self.sized
            append = values.append
            try:
                for call, one, get in self._quick:
                    if get is not None:
                        result = call(*get(values))
                    elif one is not None:
                        result = call(values[one])
                    else:
                        result = call()
                    if sized and getattr(result, "nbytes", 0) >= _QUICK_BYTES \
                            and result.nbytes > budget.current():
                        self.check(list(inputs))  # the layer's own error (IR109)
                    append(result)
            except OpError as e:  # the layer that raised: the one after those done
                location = self.layers[len(values) - self.count].location
                raise IRError.make(e.code or "IR605", str(e), location) from None
            return values[-1]
        values.extend([None] * len(self._plan))
        at = self.count
        limit = budget.current() if self.sized else None
        pool = buffers.current()
        for kernel, refs, over, ufunc, overwritable, dead, location in self._plan:
            args = [values[r] for r in refs]
            try:
                result = _run(kernel, args, over, ufunc, overwritable)
            except OpError as e:  # the layer's own rule, named by the layer
                raise IRError.make(e.code or "IR605", str(e), location) from None
            args = None
            if limit is not None and getattr(result, "nbytes", 0) > limit:
                self.check(list(inputs))  # the layer's own error (IR109)
            values[at] = result
            result = None  # (a reference would hide the value's privacy from later layers)
            at += 1
            for r in dead:  # as the run loop frees a slot: large arrays kept for reuse
                value = values[r]
                values[r] = None
                if pool is not None and value is not None and value.nbytes >= _MIN_BYTES:
                    pool.give(value, 1)
                value = None
        return values[-1]

    def check(self, inputs: list) -> None:
        """The layers' per-call checks, each on its own inputs (computed by the layers'
        kernels): a step whose layers' rules the model left open checks them all. The run
        loop calls the kernel next on the same arrays, which then returns the result computed
        here (kept per thread, with the inputs it was computed from) rather than computing it
        twice: a new signature's first call costs what the unfused plan's does."""
        _CHECKED.last = None
        # after the kernel ran on these arrays (a check made for its error, or for the size of
        # what it made), nothing to keep: the kernel will not be called next on them
        keep = _CHECKED.ran != (self, tuple(map(id, inputs)))
        values = list(inputs)
        for layer in self.layers:
            args = [values[r] for r in layer.refs]
            if layer.check is not None:
                layer.check(args)
            try:
                values.append(layer.kernel(*args))
            except OpError as e:
                raise IRError.make(e.code or "IR605", str(e), layer.location) from None
        if keep:
            _CHECKED.last = (self, tuple(inputs), values[-1])

    def __repr__(self) -> str:
        return f"<fused {self.name}: {len(self.layers)} layers>"


_MIN_BYTES = buffers.MIN_BYTES
# A first input (the data the chain transforms; the others are often weights) under this many
# bytes: the step runs its layers without writing over values or handing them to the pool (a
# decode step's values; results are the same either way, only memory reuse differs; the memory
# budget is held for every value of this size or more, the step's own output for any size by
# the run loop).
_QUICK_BYTES = 16 << 10
_COUNTS_PROVE = buffers.COUNTS_PROVE


class _Checked(threading.local):
    last = None  # (kernel, its inputs, the result its check computed) or None
    ran = None  # (kernel, the ids of its inputs) of the last fused kernel to start


_CHECKED = _Checked()


def checked_pending() -> bool:
    """Whether a check just computed some fused kernel's result for the call in progress (the
    kernel then returns it: see ``FusedKernel.check``)."""
    return _CHECKED.last is not None


def ran(kernel, inputs) -> None:
    """Note that ``kernel`` computed its result on ``inputs`` another way than its layers (a
    check made after it keeps nothing, as after ``FusedKernel.__call__``)."""
    _CHECKED.ran = (kernel, tuple(map(id, inputs)))


def _run(kernel, args: list, over, ufunc, overwritable: tuple[int, ...]):
    """One layer's result: its ufunc (over a value it may write over, where numpy can), its
    in-place variant (over its first input, where it may), or its kernel."""
    if ufunc is not None:
        out = _writable(args, overwritable)
        if out is not None:
            try:
                return ufunc(*args, out=out)
            except ValueError:  # the result is larger than the value: a new array
                pass
            out = None
        return ufunc(*args)
    if over is not None and overwritable and overwritable[0] == 0 \
            and _writable(args, (0,)) is not None:
        return over(*args)
    return kernel(*args)


def _writable(args: list, overwritable: tuple[int, ...]):
    """The first of the arrays the layer may write over that nothing but this step refers to:
    its reference count is the step's own (its slot in the step's values, its places in
    ``args``, and here), so no kernel kept it and no view of it lives (the layer that made it
    is of a kind that returns memory of its own: fusion.py's FRESH; this is the proof)."""
    if not _COUNTS_PROVE:
        return None
    for i in overwritable:
        a = args[i]
        held = 3  # the step's values, this variable, getrefcount's argument
        for other in args:
            held += other is a
        other = None
        if a.ndim and a.flags.writeable and sys.getrefcount(a) <= held:
            return a
    return None
