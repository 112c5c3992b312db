"""CompiledModel and InferRequest: check the caller's inputs, run the plan, return the outputs."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

import numpy as np

from irexec import budget, forksafe
from irexec.errors import IRError, OpError
from irexec.ir import element_type as et_table
from irexec.ir.model import Model, OutputPort
from irexec.ir.shape import PartialShape
from irexec.kernels import buffers, numeric, scratch, state
from irexec.runtime import fusion
from irexec.runtime.plan import InputSlot, Plan, compile_plan, kernel_error, memoized
from irexec.runtime.plan import call_signature, remember_call
from irexec.runtime.plan import check as check_step
from irexec.runtime.plan import check_known, oversized, sized_check
from irexec.runtime.call_code import CallCode
from irexec.runtime.precise import precision_of
from irexec.runtime.infer_request import InferRequest, VariableState, variable_states
from irexec.runtime.properties import CompiledProperties
from irexec.runtime.results import OutputIndex, Results, Tensor
from irexec.runtime.loop_code import LoopCode
from irexec.runtime.loop_code import small as small_body
from irexec.runtime.trace import Tracer, body_trace, traces_bodies
from irexec.diagnostics.diagnostic import Location


_KEPT_POOLS = 4  # spare-memory pools kept between calls: one per call running at once


def _plain_form(slot: InputSlot) -> tuple[np.dtype | None, tuple[int, ...] | None, int | None]:
    """The numpy dtype an input array of ``slot`` has when it needs no conversion (None for
    dynamic, coded and string element types), its shape when the slot's is static, and its rank
    when every dim is free (any size fits): what :func:`_as_array` checks first, a call's
    common case, in two comparisons."""
    et, dtype = slot.element_type, None
    if not et.is_dynamic and not et.is_coded and et.kind != "string":
        try:
            if et_table.from_dtype(et.dtype) == et and et.dtype.isnative:
                dtype = et.dtype
        except (KeyError, AttributeError, TypeError):
            dtype = None
    shape = slot.shape
    free = shape.rank_is_static and all(d.min == 0 and d.max is None for d in shape)
    return dtype, (shape.to_shape() if shape.is_static else None), (len(shape) if free else None)


def _as_array(value, slot: InputSlot, plain=(None, None, None),
              convert: bool = False) -> np.ndarray:
    """``value`` as the array the input ``slot`` takes; IRError (IR603, IR604) if it cannot
    be. ``convert``: numbers of another type are converted to the input's, as OpenVINO's
    Python API converts them (``astype``: a float64 array for an f32 input, a Python list);
    without it (irexec's own checks: the command line) another type is an error."""
    dtype, shape, rank = plain
    if type(value) is np.ndarray and dtype is not None and value.dtype == dtype:
        if value.shape == shape or shape is None and (
                value.ndim == rank if rank is not None else slot.shape.contains(value.shape)):
            return value
    if isinstance(value, Tensor):
        value = value.data
    array = np.asarray(value)
    if convert:
        array = _converted(array, slot)
    if array.dtype.byteorder not in ("=", "|") and array.dtype.kind in "biuf":
        array = array.astype(array.dtype.newbyteorder("="))  # big-endian input: same values
    if array.dtype.kind == "U":  # numpy unicode strings: held as object arrays of str
        array = array.astype(object)
    if array.dtype.kind == "O":
        bad = next((v for v in array.reshape(-1) if not isinstance(v, str)), None)
        if bad is not None:
            raise IRError.make("IR603", f"input '{slot.name}' is a numpy object array holding "
                                        f"{type(bad).__name__} {bad!r}; object arrays may hold "
                                        f"Python str only (element type string)", slot.location)
    expected = slot.element_type
    if expected.is_coded and array.dtype == np.uint8:  # u3, u6, nf4 given as raw codes
        if array.size and int(array.max()) > expected.max_code:
            raise IRError.make("IR603", f"input '{slot.name}' is {expected}, whose codes are 0 "
                                        f"to {expected.max_code}, but holds {int(array.max())}",
                               slot.location)
        array = et_table.from_codes(expected, array)
    try:
        got = et_table.from_dtype(array.dtype)
    except KeyError:
        raise IRError.make("IR603", f"input '{slot.name}' has numpy dtype {array.dtype}, which "
                                    f"irexec cannot hold; expected {expected}",
                           slot.location) from None
    if not expected.is_dynamic and got != expected:
        raise IRError.make("IR603", f"input '{slot.name}' expects element type {expected} but got "
                                    f"{got} (numpy {array.dtype}); {_how_to_give(expected)}",
                           slot.location)
    return _check_shape(array, slot)


_NUMERIC_KINDS = "biuf"


def _converted(array: np.ndarray, slot: InputSlot) -> np.ndarray:
    """OpenVINO's conversions of a value for an input: numbers (booleans too) cast to the
    input's numeric type; a scalar given for an input of one element takes its shape."""
    expected = slot.element_type
    if expected.is_dynamic or expected.is_coded or expected.dtype is None:
        return array
    target = expected.dtype
    if array.dtype != target and expected.kind in ("boolean", "int", "uint", "float") and \
            _is_number(array.dtype):
        array = array.astype(target)
    if array.ndim == 0 and slot.shape.is_static:
        dims = slot.shape.to_shape()
        if len(dims) and int(np.prod(dims)) == 1:
            array = array.reshape(dims)
    return array


def _is_number(dtype: np.dtype) -> bool:
    if dtype.kind in _NUMERIC_KINDS:
        return True
    try:  # ml_dtypes' types (bf16, f8, i4 ...) are numbers too
        et = et_table.from_dtype(dtype)
    except KeyError:
        return False
    return et.kind in ("int", "uint", "float") and not et.is_coded


def _is_simple_list(value) -> bool:
    """A list of numbers (or of lists of numbers): one input's value, for a model of one
    input, as OpenVINO reads it."""
    for item in value:
        items = item if isinstance(item, list) else (item,)
        if not all(isinstance(v, (int, float, str, bytes, np.number)) for v in items):
            return False
    return True


def _how_to_give(et) -> str:
    """How to make an array of this element type, for error messages."""
    if et.is_coded:
        return f"give its {et.bits}-bit codes as a uint8 array"
    if et.kind == "string":
        return "give a numpy array of str"
    if et.dtype.type.__module__.startswith("ml_dtypes"):
        return f"convert it with .astype(ml_dtypes.{et.dtype.name})"
    return f"convert it with .astype({et.dtype.name!r})"


def _check_shape(array: np.ndarray, slot: InputSlot) -> np.ndarray:
    if not slot.shape.contains(array.shape):
        raise IRError.make("IR604", f"input '{slot.name}' expects shape {slot.shape} but got "
                                    f"{PartialShape(array.shape)}", slot.location)
    return array


class CompiledModel:
    """A model ready to run: ``compiled(inputs) -> Results`` (outputs by index, name or
    port, as OpenVINO's).

    Thread safety: one CompiledModel may be called from any number of threads at once. A call
    reads the plan and the constants (never written after compiling), keeps its values in its
    own slots, and draws reused memory from a pool no other call holds; an array it returns is
    never written again by irexec. An InferRequest keeps its last ``results``: give each thread
    its own."""

    def __init__(self, model: Model, config: Mapping | None = None,
                 properties: CompiledProperties | None = None):
        self.model = model
        # config {"precision": "f64"}: precise mode (irexec/runtime/precise.py)
        self.precision = precision_of(config)
        # config {"decompression": "fused" | "per-call" | "ir"}: irexec/runtime/fusion.py
        self.decompression = fusion.mode_of(config)
        # config {"fusion": "on" | "off"}: patterns of layers as one step (runtime/fusion.py)
        self.fusion = fusion.fusion_of(config)
        # OpenVINO's properties as given and as irexec reports them (runtime/properties.py)
        self.properties = properties or CompiledProperties(model.name, self.precision)
        self.plan: Plan = compile_plan(model, precise=self.precision == "f64",
                                       decompression=self.decompression,
                                       fuse=self.fusion == "on")
        self._by_name: dict[str, InputSlot] = {}
        self._plain = {slot.slot: _plain_form(slot) for slot in self.plan.inputs}
        # how Results finds an output by index, name or port, made once
        self._outputs_index = OutputIndex(self.model.outputs,
                                          [o.name for o in self.plan.outputs])
        self._position = {slot.slot: i for i, slot in enumerate(self.plan.inputs)}
        for slot in self.plan.inputs:
            for name in slot.names:
                self._by_name.setdefault(name, slot)
        # spare memory for the kernels' outputs, one pool per call in flight (see _infer)
        self._pools: list[tuple[buffers.Pool, list[np.ndarray]]] = []
        self._lock = threading.Lock()
        forksafe.renew(self, "_lock")
        self._variables: dict[str, np.ndarray] = {}  # the state of calls made without a request
        for node, runners in self.plan.bodies:
            for name, body in node.bodies.items():
                runners[name] = BodyRunner(node, body, self.precision, self.fusion)

    @property
    def inputs(self):
        return self.model.inputs

    @property
    def outputs(self):
        return self.model.outputs

    def input_name(self, name: str) -> str | None:
        """The Parameter layer name that ``name`` (a layer or tensor name) refers to."""
        slot = self._by_name.get(name)
        return slot.name if slot else None

    def input_element_type(self, name: str):
        """The element type of the input ``name`` (a layer or tensor name); None if no such input."""
        slot = self._by_name.get(name)
        return slot.element_type if slot else None

    def input_names(self) -> list[str]:
        return [s.name for s in self.plan.inputs]

    def output_names(self) -> list[str]:
        return [o.name for o in self.plan.outputs]

    def results_of(self, by_name: dict[str, np.ndarray]) -> Results:
        """This model's results object for outputs computed elsewhere (a worker process),
        given by output name (``Results.by_name()``'s form)."""
        return Results([by_name[name] for name in self.output_names()], self._outputs_index)

    def check_input(self, name: str, value) -> np.ndarray:
        """``value`` as an array for the input ``name`` (a layer or tensor name); IRError
        (IR601, IR603, IR604) if there is no such input or its element type or shape is wrong."""
        slot = self._by_name.get(name)
        if slot is None:
            known = ", ".join(repr(s.name) for s in self.plan.inputs) or "none"
            raise IRError.make("IR601", f"the model has no input named {name!r} (inputs: {known})",
                               Location(self.model.path))
        return _as_array(value, slot)

    def _input_position(self, key) -> int | None:
        """The position of the input ``key`` names: an index, a name (a Parameter's layer name
        or any tensor name of its port), or a port (``model.input(i)``, ``compiled.input(i)``
        or a port of a copy of the model with the same name); None if none."""
        slots = self.plan.inputs
        if type(key) is str:
            slot = self._by_name.get(key)
            return None if slot is None else self._position[slot.slot]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            return int(key) if 0 <= key < len(slots) else None
        if isinstance(key, OutputPort):
            for i, port in enumerate(self.model.inputs):
                if port is key:
                    return i
            for name in (key.node.name, *key.names):
                slot = self._by_name.get(name)
                if slot is not None:
                    return self._position[slot.slot]
            return None
        raise IRError.make("IR601", f"an input is chosen by name, index or port, not "
                                    f"{type(key).__name__} ({key!r})", Location(self.model.path))

    def _no_such_input(self, key) -> IRError:
        known = ", ".join(repr(s.name) for s in self.plan.inputs) or "none"
        what = f"index {key}" if isinstance(key, (int, np.integer)) else \
            f"port {key!r}" if isinstance(key, OutputPort) else f"named {key!r}"
        return IRError.make("IR601", f"the model has no input {what} (inputs: {known})",
                            Location(self.model.path))

    def _bind_one(self, position: int, value) -> np.ndarray:
        """The array for input ``position`` from a value (converted as for a call)."""
        slot = self.plan.inputs[position]
        return _as_array(value, slot, self._plain[slot.slot], True)

    def _bind_inputs(self, inputs, fill=None, convert: bool = True) -> dict[int, np.ndarray]:
        """{slot: array} for a call, from every form OpenVINO's API takes: one array (or
        Tensor, or scalar) for a model of one input, a list or tuple in Parameter order, a
        dict keyed by name, index or port; values as arrays, Tensors, lists or numbers.
        ``fill(position)``: the array for an input not given (an infer request's tensors),
        None if it has none; an input neither given nor filled is an error (IR602)."""
        slots = self.plan.inputs
        plain = self._plain
        kind = type(inputs)
        if kind is np.ndarray or kind is Tensor or (
                inputs is not None and not isinstance(inputs, (Mapping, list, tuple))):
            if len(slots) != 1:
                raise IRError.make("IR602", f"one value was given but the model takes "
                                            f"{len(slots)} inputs (in order: "
                                            f"{', '.join(s.name for s in slots)}); give a "
                                            f"list or a dict", Location(self.model.path))
            slot = slots[0]
            return {slot.slot: _as_array(inputs, slot, plain[slot.slot], convert)}
        given: dict[int, np.ndarray] = {}
        if inputs is None:
            pass
        elif kind is dict or isinstance(inputs, Mapping):
            if isinstance(inputs, Results):
                inputs = dict(enumerate(inputs.values()))
            for key, value in inputs.items():
                i = self._input_position(key)
                if i is None:
                    raise self._no_such_input(key)
                slot = slots[i]
                if slot.slot in given:
                    raise IRError.make("IR601", f"input '{slot.name}' is given twice (as "
                                                f"{key!r} and another of its names)",
                                       slot.location)
                given[slot.slot] = _as_array(value, slot, plain[slot.slot], convert)
        else:
            if (len(slots) == 1 and kind is list and _is_simple_list(inputs)
                    and not (len(inputs) == 1 and not isinstance(inputs[0], list))):
                # a list of numbers: the one input's value; one number alone in a list is
                # the list of inputs (OpenVINO's reading: [np.float32(1.5)] for a scalar)
                inputs = [inputs]
            if len(inputs) > len(slots) or (fill is None and len(inputs) != len(slots)):
                raise IRError.make("IR602", f"the model takes {len(slots)} inputs (in order: "
                                            f"{', '.join(s.name for s in slots)}) but "
                                            f"{len(inputs)} {'was' if len(inputs) == 1 else 'were'}"
                                            f" given", Location(self.model.path))
            for s, v in zip(slots, inputs):
                given[s.slot] = _as_array(v, s, plain[s.slot], convert)
        if len(given) < len(slots):
            missing = []
            for i, s in enumerate(slots):
                if s.slot not in given:
                    value = None if fill is None else fill(i)
                    if value is None:
                        missing.append(s.name)
                    else:
                        given[s.slot] = _as_array(value, s, plain[s.slot], convert)
            if missing:
                raise IRError.make("IR602", f"no value given for input{'s' * (len(missing) > 1)} "
                                            f"{', '.join(map(repr, missing))}",
                                   Location(self.model.path))
        return given

    def __call__(self, inputs=None, share_inputs: bool = True, share_outputs: bool = False, *,
                 decode_strings: bool = True, trace=None, variables: dict | None = None,
                 trace_bodies: bool = False, profile: dict | None = None) -> Results:
        """Run the plan on ``inputs`` (every form OpenVINO takes: see ``_bind_inputs``) and
        return the outputs as :class:`Results`. ``share_inputs``/``share_outputs`` are
        OpenVINO's and change nothing here: irexec never copies nor writes the inputs, and the
        arrays it returns are its own, never written again. ``decode_strings`` is accepted
        (string outputs are arrays of Python str either way).
        ``trace`` (a directory, or a callable ``trace(layer, port, array)``)
        is given every layer's outputs as they are made; with ``trace_bodies`` the layers of
        sub-graphs too, per iteration (see ``irexec.runtime.trace``). ``profile``: a dict to
        which each layer's time in this call is added, in seconds, keyed by layer id (a layer
        with bodies counts theirs; layers folded into constants take none).
        ``variables`` holds a stateful model's variables (ReadValue/Assign) between calls: an
        InferRequest's own; by default the compiled model's."""
        return self._infer(self._bind_inputs(inputs), trace, variables, trace_bodies, profile)

    def _infer(self, bound: dict[int, np.ndarray], trace=None, variables: dict | None = None,
               trace_bodies: bool = False, profile: dict | None = None) -> Results:
        """Run the plan on inputs already bound to their slots."""
        plan = self.plan if trace is None else self.plan.traced()  # traces: layer by layer
        # Memory no one can reach any more, for the kernels' outputs (see kernels/buffers.py):
        # this call's freed intermediates, and an earlier call's outputs if the caller dropped
        # them. Each call takes a pool for itself under the lock, so concurrent calls (from
        # several threads, an AsyncInferQueue) never share one; each gives it back after.
        with self._lock:
            pool, returned = self._pools.pop() if self._pools else (buffers.Pool(), [])
        while returned:
            pool.give(returned.pop(), 0)
        tracer = Tracer(trace, self.model, trace_bodies) if trace is not None else None
        token = tracer.activate() if tracer is not None else None
        try:
            with buffers.using(pool), state.using(self._variables if variables is None
                                                   else variables), numeric.ignoring():
                outputs = self._run(plan, None, tracer, bound, profile=profile)
        finally:
            if tracer is not None:
                tracer.deactivate(token)
                tracer.close()  # a trace folder's index lists what was made, even after an error
        returned = [a for a in outputs if a.nbytes >= buffers.MIN_BYTES]
        with self._lock:
            if len(self._pools) < _KEPT_POOLS:
                self._pools.append((pool, returned))
        return Results(outputs, self._outputs_index)

    @property
    def _pool(self) -> buffers.Pool | None:
        """The spare-memory pool the next call takes (None before the first call)."""
        return self._pools[-1][0] if self._pools else None

    def release_memory(self) -> None:
        """Drop the spare arrays kept for reuse by the next call (as OpenVINO's
        ``CompiledModel.release_memory``), and the kernels' scratch memory of every thread
        (kernels/scratch.py). Arrays already returned are never touched."""
        with self._lock:
            self._pools = []
        scratch.release()

    def _run(self, plan: Plan, inputs, tracer: Tracer | None, bound=None,
             profile: dict | None = None) -> list[np.ndarray]:
        """Run the plan on ``inputs`` (checked here), or on ``bound``: {slot: array} already
        known to fit (a body's Parameters, fed by its layer after inference)."""
        pool = buffers.current()
        min_bytes = buffers.MIN_BYTES
        values: list[np.ndarray | None] = plan.initial_values.copy()
        if bound is None:
            bound = self._bind_inputs(inputs)
        for s, array in bound.items():
            values[s] = array
        if tracer is not None:
            tracer.inputs(plan, values)
        # A call like one before (runtime/plan.py): the steps whose checks read no values skip
        # them, so an LLM's decode step does no shape inference.
        call = call_signature(bound.values(), state.current())
        known = call in plan.seen_calls
        limit = budget.current()
        if known and tracer is None and profile is None:
            # each step a closure with its decisions settled (runtime/call_code.py)
            code = plan.call_code
            if code is None:
                code = plan.call_code = CallCode(plan, self.model)
            code(values, limit)
            return [np.array(values[o.slot]) if o.copy else values[o.slot]
                    for o in plan.outputs]
        clock = time.perf_counter if profile is not None else None
        for step in plan.steps:
            if clock is not None:
                started = clock()
            args = [values[i] for i in step.inputs]
            memo = step.memo
            if memo is not None:  # shape arithmetic: once per distinct input
                result = memoized(step, args, known)
                args = None
                self._store(step, values, result)
                result = None
                if clock is not None:
                    lid = step.location.layer_id
                    profile[lid] = profile.get(lid, 0.0) + clock() - started
                if tracer is not None:
                    tracer.step(step, values)
                for s in step.free:
                    values[s] = None
                continue
            held = None
            if step.check is not None:  # rules that could not be decided at read time
                if not known or step.checked is None:
                    check_step(step, args)
                elif step.sized:
                    if sized_check(step, args, limit):  # sizes may come from the values
                        held = args  # the outputs' sizes are checked after the kernel
                elif step.check_values is not None:
                    check_known(step, args)  # value domains only
            kernel = step.kernel
            if step.in_place is not None:
                # The first input dies here: write over it if nothing else can see it.
                values[step.inputs[0]] = None
                if buffers.private(args[0], 1):
                    kernel = step.in_place
                else:
                    values[step.inputs[0]] = args[0]
            try:
                result = kernel(*args)
                args = None  # the free below proves arrays unreachable by their counts
            except (OpError, MemoryError) as e:
                raise kernel_error(e, step.location) from None
            except Exception:
                if step.checked is not None:  # a check skipped for a like signature: say why
                    step.check(args)
                raise
            if held is not None:
                oversized(step, (result,) if len(step.outputs) == 1 else result, held, limit)
                held = None
            if len(step.outputs) == 1:
                values[step.outputs[0]] = result
            else:
                for s, r in zip(step.outputs, result):
                    values[s] = r
                r = None
            result = None  # the slots hold the outputs now; reference counts prove the rest
            if clock is not None:
                lid = step.location.layer_id
                profile[lid] = profile.get(lid, 0.0) + clock() - started
            if tracer is not None:
                tracer.step(step, values)
            for s in step.free:
                value = values[s]
                values[s] = None
                if value is not None and value.nbytes >= min_bytes:
                    pool.give(value, 1)
                del value
        if tracer is not None:
            tracer.finish()
        if not known:
            remember_call(plan, call)
        return [np.array(values[o.slot]) if o.copy else values[o.slot] for o in plan.outputs]

    def run_by_id(self, values: dict[int, np.ndarray], trace=None) -> dict[int, np.ndarray]:
        """Run with inputs keyed by Parameter layer id; outputs keyed by Result layer id (how a
        layer with a sub-graph runs its body); ``trace``: a callable, told the body's layers
        (and those of bodies inside it)."""
        plan = self.plan if trace is None else self.plan.traced()
        bound = {s.slot: values[s.layer_id] for s in plan.inputs}
        if trace is None:
            outputs = self._run(plan, None, None, bound)
        else:
            tracer = Tracer(trace, self.model, bodies=True)
            token = tracer.activate()
            try:
                outputs = self._run(plan, None, tracer, bound)
            finally:
                tracer.deactivate(token)
        return {o.layer_id: a for o, a in zip(plan.outputs, outputs)}

    @staticmethod
    def _store(step, values: list, result) -> None:
        if len(step.outputs) == 1:
            values[step.outputs[0]] = result
        else:
            for s, r in zip(step.outputs, result):
                values[s] = r

    def create_infer_request(self) -> InferRequest:
        return InferRequest(self)

    # --- OpenVINO's names ---------------------------------------------------------------------

    def get_runtime_model(self) -> Model:
        """The model this runs (irexec runs the model as read: no other graph)."""
        return self.model

    def query_state(self) -> list[VariableState]:
        """The variables of the calls made on the compiled model itself (``compiled(x)``)."""
        return variable_states(self.model, self._variables)

    def reset_state(self) -> None:
        self._variables.clear()

    def get_property(self, name: str):
        """One of the properties this was compiled with (``irexec.properties``), or one
        irexec reports (``OPTIMAL_NUMBER_OF_INFER_REQUESTS``, ``SUPPORTED_PROPERTIES`` ...)."""
        return self.properties.get(name)

    def set_property(self, properties) -> None:
        self.properties.set(properties)

    def input(self, key=None):
        """An input port: the only one (no key), by index, or by name (as OpenVINO's)."""
        return self.model.input(key, out_of_range=RuntimeError)

    def output(self, key=None):
        """An output port: the only one (no key), by index, or by name (as OpenVINO's)."""
        return self.model.output(key, out_of_range=RuntimeError)

    def infer_new_request(self, inputs=None) -> Results:
        """Run once in a new request (OpenVINO's name for a call)."""
        return self.create_infer_request().infer(inputs)

    def __repr__(self) -> str:
        return (f"<CompiledModel: {self.model.name!r}, inputs "
                f"{[p.get_any_name() for p in self.model.inputs]}, outputs "
                f"{[p.get_any_name() for p in self.model.outputs]}>")


class BodyRunner:
    """One body of a layer with sub-graphs, compiled once into a plan of its own, and what its
    kernel needs to map the layer's ports onto it: ``runner({parameter id: array})`` returns
    ``{result id: array}``."""

    def __init__(self, node, body, precision: str | None = None, fusion: str = "on"):
        self.node, self.body = node, body
        self.precision = precision  # the enclosing model's: precise mode reaches into bodies
        self.fusion = fusion  # and so does the fusion mode
        self.input_position = {p.port_id: i for i, p in enumerate(node.inputs)}
        self.output_position = {p.port_id: i for i, p in enumerate(node.outputs)}
        self.num_outputs = len(node.outputs)
        self._compiled: CompiledModel | None = None
        self._loop_code: LoopCode | bool | None = None  # False: the body takes the run loop

    def __call__(self, values: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
        return self._model().run_by_id(values, body_trace(self.node, self.body.name))

    def _model(self) -> CompiledModel:
        if self._compiled is None:
            config = {"fusion": self.fusion}
            if self.precision:
                config["precision"] = self.precision
            self._compiled = CompiledModel(self.body.model, config)
        return self._compiled

    def loop_code(self) -> LoopCode | None:
        """The body's iterations as one function (irexec/runtime/loop_code.py), for a body of
        small values in a run that traces no body layers; None: run it one call at a time."""
        if traces_bodies():
            return None
        if self._loop_code is None:
            plan = self._model().plan
            self._loop_code = LoopCode(plan, self.body) \
                if small_body(plan, self.body.model) else False
        return self._loop_code or None

    def parameter_dtype(self, layer_id: int) -> np.dtype:
        return self.body.model.by_id[layer_id].attrs["element_type"].dtype

    def _result_type(self, layer_id: int):
        return self.body.model.by_id[layer_id].inputs[0].source

    def empty_concatenation(self, mapping) -> np.ndarray:
        """A concatenated output of a loop that ran no iteration: size 0 along the axis."""
        port = self._result_type(mapping.internal)
        shape = port.partial_shape
        dims = [d.min if d.is_static else 0 for d in shape] if shape.rank_is_static else [0]
        dims = dims or [1]
        dims[mapping.axis % len(dims)] = 0
        return np.zeros(dims, dtype=port.element_type.dtype)

    def empty_value(self, mapping) -> np.ndarray:
        """The last value of a body output that no iteration computed and no back edge starts:
        zeros of its static shape (OpenVINO leaves it uninitialised)."""
        port = self._result_type(mapping.internal)
        shape = port.partial_shape
        dims = [d.min if d.is_static else 0 for d in shape] if shape.rank_is_static else []
        return np.zeros(dims, dtype=port.element_type.dtype)
