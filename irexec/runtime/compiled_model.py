"""CompiledModel and InferRequest: check the caller's inputs, run the plan, return the outputs."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence

import numpy as np

from irexec.errors import IRError, OpError
from irexec.ir import element_type as et_table
from irexec.ir.model import Model, OutputPort
from irexec.ir.shape import PartialShape
from irexec.kernels import buffers, numeric, scratch, state
from irexec.runtime.plan import InputSlot, Plan, compile_plan, kernel_error, memoized
from irexec.runtime.precise import precision_of
from irexec.runtime.results import Results, Tensor, port_names
from irexec.runtime.loop_code import LoopCode
from irexec.runtime.loop_code import small as small_body
from irexec.runtime.trace import Tracer, body_trace, traces_bodies
from irexec.diagnostics.diagnostic import Location


def _plain_form(slot: InputSlot) -> tuple[np.dtype | None, tuple[int, ...] | None]:
    """The numpy dtype an input array of ``slot`` has when it needs no conversion (None for
    dynamic, coded and string element types), and its shape when the slot's is static: what
    :func:`_as_array` checks first, a call's common case, in two comparisons."""
    et, dtype = slot.element_type, None
    if not et.is_dynamic and not et.is_coded and et.kind != "string":
        try:
            if et_table.from_dtype(et.dtype) == et and et.dtype.isnative:
                dtype = et.dtype
        except (KeyError, AttributeError, TypeError):
            dtype = None
    return dtype, (slot.shape.to_shape() if slot.shape.is_static else None)


def _as_array(value, slot: InputSlot, plain=(None, None)) -> np.ndarray:
    dtype, shape = plain
    if type(value) is np.ndarray and dtype is not None and value.dtype == dtype:
        if value.shape == shape or shape is None and slot.shape.contains(value.shape):
            return value
    array = np.asarray(value)
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
    """A model ready to run: ``compiled(inputs) -> {output name: array}``.

    Thread safety: one CompiledModel may be called from any number of threads at once. A call
    reads the plan and the constants (never written after compiling), keeps its values in its
    own slots, and draws reused memory from a pool no other call holds; an array it returns is
    never written again by irexec. An InferRequest keeps its last ``results``: give each thread
    its own."""

    def __init__(self, model: Model, config: Mapping | None = None):
        self.model = model
        # config {"precision": "f64"}: precise mode (irexec/runtime/precise.py)
        self.precision = precision_of(config)
        self.plan: Plan = compile_plan(model, precise=self.precision == "f64")
        self._by_name: dict[str, InputSlot] = {}
        self._plain = {slot.slot: _plain_form(slot) for slot in self.plan.inputs}
        # how Results maps the model's output ports to names, made once
        self._output_ports = port_names(self.model.outputs, [o.name for o in self.plan.outputs])
        for slot in self.plan.inputs:
            for name in slot.names:
                self._by_name.setdefault(name, slot)
        self._pool: buffers.Pool | None = None
        self._lock = threading.Lock()  # hands the pool to one call at a time
        self._returned: list[np.ndarray] = []
        self._variables: dict[str, np.ndarray] = {}  # the state of calls made without a request
        for node, runners in self.plan.bodies:
            for name, body in node.bodies.items():
                runners[name] = BodyRunner(node, body, self.precision)

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

    def check_input(self, name: str, value) -> np.ndarray:
        """``value`` as an array for the input ``name`` (a layer or tensor name); IRError
        (IR601, IR603, IR604) if there is no such input or its element type or shape is wrong."""
        slot = self._by_name.get(name)
        if slot is None:
            known = ", ".join(repr(s.name) for s in self.plan.inputs) or "none"
            raise IRError.make("IR601", f"the model has no input named {name!r} (inputs: {known})",
                               Location(self.model.path))
        return _as_array(value, slot)

    def _bind_inputs(self, inputs) -> dict[int, np.ndarray]:
        slots = self.plan.inputs
        if inputs is None:
            inputs = {}
        if type(inputs) is dict or isinstance(inputs, Mapping):
            given: dict[int, np.ndarray] = {}
            for key, value in inputs.items():
                slot = self._by_name.get(key)
                if slot is None:
                    known = ", ".join(repr(s.name) for s in slots) or "none"
                    raise IRError.make("IR601", f"the model has no input named {key!r} "
                                                f"(inputs: {known})", Location(self.model.path))
                if slot.slot in given:
                    raise IRError.make("IR601", f"input '{slot.name}' is given twice (as "
                                                f"{key!r} and another of its names)", slot.location)
                given[slot.slot] = _as_array(value, slot, self._plain[slot.slot])
        elif isinstance(inputs, Sequence) and not isinstance(inputs, (str, bytes)):
            if len(inputs) != len(slots):
                raise IRError.make("IR602", f"the model takes {len(slots)} inputs (in order: "
                                            f"{', '.join(s.name for s in slots)}) but "
                                            f"{len(inputs)} {'was' if len(inputs) == 1 else 'were'} given", Location(self.model.path))
            given = {s.slot: _as_array(v, s, self._plain[s.slot])
                     for s, v in zip(slots, inputs)}
        else:
            raise IRError.make("IR601", "inputs must be a dict {name: array} or a list in "
                                        "Parameter order", Location(self.model.path))
        missing = [s.name for s in slots if s.slot not in given]
        if missing:
            raise IRError.make("IR602", f"no value given for input{'s' * (len(missing) > 1)} "
                                        f"{', '.join(map(repr, missing))}",
                               Location(self.model.path))
        return given

    def __call__(self, inputs=None, trace=None, variables: dict | None = None,
                 trace_bodies: bool = False, profile: dict | None = None) \
            -> dict[str, np.ndarray]:
        """Run the plan. ``trace`` (a directory, or a callable ``trace(layer, port, array)``)
        is given every layer's outputs as they are made; with ``trace_bodies`` the layers of
        sub-graphs too, per iteration (see ``irexec.runtime.trace``). ``profile``: a dict to
        which each layer's time in this call is added, in seconds, keyed by layer id (a layer
        with bodies counts theirs; layers folded into constants take none).
        ``variables`` holds a stateful model's variables (ReadValue/Assign) between calls: an
        InferRequest's own; by default the compiled model's."""
        plan = self.plan
        # Memory no one can reach any more, for the kernels' outputs (see kernels/buffers.py):
        # this call's freed intermediates, and the last call's outputs if the caller dropped
        # them. Each call takes the pool for itself under the lock, so concurrent calls (from
        # several threads) never share one: a second call meanwhile starts a fresh pool.
        with self._lock:
            pool, self._pool = self._pool or buffers.Pool(), None
            returned, self._returned = self._returned, []
        while returned:
            pool.give(returned.pop(), 0)
        tracer = Tracer(trace, self.model, trace_bodies) if trace is not None else None
        token = tracer.activate() if tracer is not None else None
        try:
            with buffers.using(pool), state.using(self._variables if variables is None
                                                   else variables), numeric.ignoring():
                outputs = self._run(plan, inputs, tracer, profile=profile)
        finally:
            if tracer is not None:
                tracer.deactivate(token)
                tracer.close()  # a trace folder's index lists what was made, even after an error
        with self._lock:
            self._returned = [a for a in outputs.values() if a.nbytes >= buffers.MIN_BYTES]
            self._pool = pool
        return Results(outputs, self._output_ports)

    def release_memory(self) -> None:
        """Drop the spare arrays kept for reuse by the next call (as OpenVINO's
        ``CompiledModel.release_memory``), and the kernels' scratch memory of every thread
        (kernels/scratch.py). Arrays already returned are never touched."""
        self._pool = None
        self._returned = []
        scratch.release()

    def _run(self, plan: Plan, inputs, tracer: Tracer | None, bound=None,
             profile: dict | None = None) -> dict[str, np.ndarray]:
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
        clock = time.perf_counter if profile is not None else None
        for step in plan.steps:
            if clock is not None:
                started = clock()
            args = [values[i] for i in step.inputs]
            memo = step.memo
            if memo is not None:  # shape arithmetic: once per distinct input
                result = memoized(step, args)
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
            if step.check is not None:
                step.check(args)  # rules that could not be decided when the model was read
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
        return {o.name: (np.array(values[o.slot]) if o.copy else values[o.slot])
                for o in plan.outputs}

    def run_by_id(self, values: dict[int, np.ndarray], trace=None) -> dict[int, np.ndarray]:
        """Run with inputs keyed by Parameter layer id; outputs keyed by Result layer id (how a
        layer with a sub-graph runs its body); ``trace``: a callable, told the body's layers
        (and those of bodies inside it)."""
        plan = self.plan
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
        return {o.layer_id: outputs[o.name] for o in plan.outputs}

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

    def input(self, key=None):
        """An input port: the only one (no key), by index, or by name (as OpenVINO's)."""
        return self.model.input(key, out_of_range=RuntimeError)

    def output(self, key=None):
        """An output port: the only one (no key), by index, or by name (as OpenVINO's)."""
        return self.model.output(key, out_of_range=RuntimeError)

    def infer_new_request(self, inputs=None) -> Results:
        """Run once in a new request (OpenVINO's name for a call)."""
        return self.create_infer_request().infer(inputs)


class BodyRunner:
    """One body of a layer with sub-graphs, compiled once into a plan of its own, and what its
    kernel needs to map the layer's ports onto it: ``runner({parameter id: array})`` returns
    ``{result id: array}``."""

    def __init__(self, node, body, precision: str | None = None):
        self.node, self.body = node, body
        self.precision = precision  # the enclosing model's: precise mode reaches into bodies
        self.input_position = {p.port_id: i for i, p in enumerate(node.inputs)}
        self.output_position = {p.port_id: i for i, p in enumerate(node.outputs)}
        self.num_outputs = len(node.outputs)
        self._compiled: CompiledModel | None = None
        self._loop_code: LoopCode | bool | None = None  # False: the body takes the run loop

    def __call__(self, values: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
        return self._model().run_by_id(values, body_trace(self.node, self.body.name))

    def _model(self) -> CompiledModel:
        if self._compiled is None:
            config = {"precision": self.precision} if self.precision else None
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


class VariableState:
    """One variable of a stateful model, as OpenVINO's ``VariableState``: ``name``, ``state``
    (its value; None before the first Assign), ``reset()``."""

    def __init__(self, variables: dict[str, np.ndarray], name: str):
        self._variables, self.name = variables, name

    @property
    def state(self) -> np.ndarray | None:
        return self._variables.get(self.name)

    def reset(self) -> None:
        self._variables.pop(self.name, None)


class InferRequest:
    """OpenVINO's request-style interface: ``request.infer(inputs)``, then ``request.results``;
    or tensors set one by one (``set_tensor``, or writing into ``get_tensor(name).data``), then
    ``infer()``; ``start_async``/``wait`` run it on another thread. A request keeps its own
    variables of a stateful model (ReadValue/Assign) between calls."""

    def __init__(self, compiled: CompiledModel):
        self.compiled = compiled
        self.results: Results = Results({}, [])
        self._inputs: dict[str, Tensor] = {}  # by Parameter layer name
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._variables: dict[str, np.ndarray] = {}

    def infer(self, inputs=None) -> Results:
        """Run on ``inputs`` (remembered as this request's input tensors), or, without them,
        on the tensors set before."""
        if inputs is None:
            inputs = {name: t.data for name, t in self._inputs.items()}
        elif isinstance(inputs, Mapping):
            for key, value in inputs.items():
                self._remember(key, value)
        self.results = self.compiled(inputs, variables=self._variables)
        return self.results

    def query_state(self) -> list[VariableState]:
        """The model's variables (every ReadValue's variable_id), in model order."""
        names = dict.fromkeys(n.attrs["variable_id"] for n in self.compiled.model.nodes
                              if "variable_id" in n.attrs and n.op.spec.role != "sink")
        return [VariableState(self._variables, name) for name in names]

    def reset_state(self) -> None:
        """Every variable back to its initial value."""
        self._variables.clear()

    def _remember(self, key, value) -> None:
        name = self._input_layer(key)
        if name is not None:
            self._inputs[name] = value if isinstance(value, Tensor) else \
                Tensor(value, shared_memory=True)

    def _input_layer(self, key) -> str | None:
        if isinstance(key, OutputPort):
            key = key.node.name if key.node.role == "parameter" else None
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            names = self.compiled.input_names()
            return names[key] if -len(names) <= key < len(names) else None
        return self.compiled.input_name(key) if isinstance(key, str) else None

    def set_tensor(self, key, tensor) -> None:
        """The value of an input (by name or port) for the next ``infer()``: a Tensor (or a
        numpy array), checked now against the input's element type and shape."""
        name = self._input_layer(key)
        if name is None:
            raise RuntimeError(f"set_tensor: the model has no input {key!r} (irexec makes new "
                               f"output arrays; an output's tensor cannot be set)")
        array = tensor.data if isinstance(tensor, Tensor) else tensor
        self.compiled.check_input(name, array)
        self._inputs[name] = tensor if isinstance(tensor, Tensor) else \
            Tensor(array, shared_memory=True)

    def get_tensor(self, key) -> Tensor:
        """An input's tensor (the one set; for a static shape not set yet, one of zeros that
        the next ``infer()`` reads, so writing into its ``.data`` gives the input) or an
        output's from the last inference, by name or port."""
        name = self._input_layer(key)
        if name is not None:
            if name not in self._inputs:
                port = self.compiled.model.input(name)
                if port.partial_shape is None or not port.partial_shape.is_static:
                    raise RuntimeError(f"input {name!r} has the dynamic shape "
                                       f"{port.partial_shape} and no tensor yet: set_tensor it")
                self._inputs[name] = Tensor(port.element_type, port.get_shape())
            return self._inputs[name]
        if key in self.results:
            return Tensor(self.results[key], shared_memory=True)
        port = self.compiled.model.output(key)  # raises if there is no such output
        raise RuntimeError(f"output {port.get_any_name()!r} has no tensor yet: call infer() "
                           f"first")

    def start_async(self, inputs=None, userdata=None) -> None:
        """Start ``infer(inputs)`` on another thread; ``wait()`` for it. RuntimeError if the
        request is still busy with the last one."""
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("the request is busy: wait() for it first")
        self._error = None

        def run():
            try:
                self.infer(inputs)
            except BaseException as e:  # handed to wait()
                self._error = e

        self._thread = threading.Thread(target=run, name="irexec-infer", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Wait for ``start_async``'s inference; raise what it raised."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        error, self._error = self._error, None
        if error is not None:
            raise error
