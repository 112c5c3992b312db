"""OpenVINO's request-style interface over a compiled model: ``InferRequest`` (tensors by name,
index and port; synchronous and asynchronous runs; a stateful model's variables; timing),
``AsyncInferQueue`` (N requests run on threads, results matched to the caller's userdata),
``VariableState`` and ``ProfilingInfo``.

A request runs its compiled model (``compiled._bind_inputs`` and ``compiled._infer``): it adds
only what it keeps between calls (input tensors, output tensors set by the user, variables,
the last results and timings) and the thread an asynchronous run takes. Threads help: numpy
releases the GIL in its large operations, so two requests of one compiled model run side by
side (a compiled model may be called from any number of threads; each call has its own slots
and memory pool).
"""

from __future__ import annotations

import datetime
import enum
import queue
import threading
import time

import numpy as np

from irexec.ir.model import Model, OutputPort
from irexec.runtime.results import Results, Tensor


# --- variables of a stateful model ------------------------------------------------------------

def variable_states(model: Model, variables: dict) -> list[VariableState]:
    """One VariableState per variable the model reads (every ReadValue's variable_id), in
    model order, over the dict a request (or the compiled model) keeps them in."""
    readers = {}
    for node in model.nodes:
        if "variable_id" in node.attrs and node.op is not None and node.op.spec.role != "sink":
            readers.setdefault(node.attrs["variable_id"], node)
    return [VariableState(variables, name, node) for name, node in readers.items()]


class VariableState:
    """One variable of a stateful model, as OpenVINO's ``VariableState``: ``name``, ``state``
    (a Tensor; settable, with a Tensor or an array), ``reset()``.

    Before the first run and after ``reset()`` the variable holds no value: the next run
    starts it from its initial value (ReadValue's input, computed in that run, or zeros of
    its shape), and ``state`` reads as zeros of its shape, as OpenVINO's does."""

    def __init__(self, variables: dict[str, np.ndarray], name: str, reader=None):
        self._variables, self.name, self._reader = variables, name, reader

    def get_name(self) -> str:
        return self.name

    def _blank(self) -> np.ndarray:
        port = self._reader.outputs[0] if self._reader is not None else None
        et = port.element_type if port is not None else None
        shape = port.partial_shape if port is not None else None
        dims = [d.min for d in shape] if shape is not None and shape.rank_is_static else [0]
        dtype = et.dtype if et is not None and et.dtype is not None else np.float32
        return np.zeros(dims, dtype)

    @property
    def state(self) -> Tensor:
        value = self._variables.get(self.name)
        return Tensor(self._blank() if value is None else value, shared_memory=True)

    @state.setter
    def state(self, value) -> None:
        self.set_state(value)

    def get_state(self) -> Tensor:
        return self.state

    def set_state(self, value) -> None:
        """The variable's value for the next run (copied; converted to its element type)."""
        array = np.array(value.data if isinstance(value, Tensor) else value, copy=True)
        port = self._reader.outputs[0] if self._reader is not None else None
        et = port.element_type if port is not None else None
        if et is not None and et.dtype is not None and array.dtype != et.dtype and \
                array.dtype.kind in "biuf":
            array = array.astype(et.dtype)
        if port is not None and port.partial_shape is not None and \
                not port.partial_shape.contains(array.shape):
            raise RuntimeError(f"variable {self.name!r} has the shape {port.partial_shape}; "
                               f"the value given is {list(array.shape)}")
        self._variables[self.name] = array

    def reset(self) -> None:
        self._variables.pop(self.name, None)

    def __repr__(self) -> str:
        return f"<VariableState: {self.name!r}>"


# --- profiling ---------------------------------------------------------------------------------

class ProfilingStatus(enum.Enum):
    NOT_RUN = 0
    OPTIMIZED_OUT = 1
    EXECUTED = 2


class ProfilingInfo:
    """One layer's time in the last run (OpenVINO's ``ProfilingInfo``)."""

    Status = ProfilingStatus

    def __init__(self, node_name: str, node_type: str, seconds: float | None):
        self.node_name, self.node_type = node_name, node_type
        self.real_time = datetime.timedelta(seconds=seconds or 0.0)
        self.cpu_time = self.real_time
        self.status = ProfilingStatus.NOT_RUN if seconds is None else ProfilingStatus.EXECUTED
        self.exec_type = "numpy"

    def __repr__(self) -> str:
        return (f"<ProfilingInfo: {self.node_name!r} ({self.node_type}) "
                f"{self.real_time.total_seconds() * 1e3:.3f} ms>")


# --- the request -------------------------------------------------------------------------------

class InferRequest:
    """OpenVINO's ``InferRequest``: ``infer(inputs)`` (any form ``compiled(...)`` takes) or
    tensors set first (``set_tensor``, ``set_input_tensor``, writing into
    ``get_input_tensor().data``) then ``infer()``; ``start_async``/``wait``/``wait_for``/
    ``set_callback`` run it on a thread. ``results``, ``latency`` (ms) and, with the
    ``PERF_COUNT`` property, ``get_profiling_info()`` describe the last run. A request keeps
    its own variables of a stateful model between runs.

    An input never given (not in any ``infer`` call, never set, its tensor never taken) is an
    error (IR602): OpenVINO runs on whatever its tensor held (docs/compatibility.md)."""

    def __init__(self, compiled):
        self.compiled = compiled
        self._index = compiled._outputs_index
        self.results: Results = Results.empty(self._index)
        self._tensors: dict[int, Tensor] = {}  # input position -> its tensor
        self._output_tensors: dict[int, Tensor] = {}  # output position -> a tensor the user set
        self._variables: dict[str, np.ndarray] = {}
        self._jobs: queue.SimpleQueue | None = None  # the worker thread's, from the first
        self._done = threading.Event()  # start_async; set when no asynchronous run is going
        self._done.set()
        self._worker: threading.Thread | None = None
        self._error: BaseException | None = None
        self._callback = None
        self.userdata = None
        self._latency = 0.0
        self._profile: dict[int, float] | None = None
        self._on_done = None  # an AsyncInferQueue's: told when each asynchronous run ends

    # --- running ---------------------------------------------------------------------------

    def infer(self, inputs=None, share_inputs: bool = False, share_outputs: bool = False, *,
              decode_strings: bool = True) -> Results:
        """Run on ``inputs`` (they become this request's input tensors), the inputs not given
        taken from the tensors set before. ``share_inputs``/``share_outputs`` change nothing
        (irexec never writes an input; its outputs are fresh arrays it never writes again)."""
        self._check_idle("infer")
        return self._run(self._bind(inputs, copy=False))

    def _bind(self, inputs, copy: bool) -> dict[int, np.ndarray]:
        compiled = self.compiled
        bound = compiled._bind_inputs(inputs, fill=self._filled)
        tensors = self._tensors
        for i, slot in enumerate(compiled.plan.inputs):
            array = bound[slot.slot]
            if copy and inputs is not None:
                tensor = tensors.get(i)
                if tensor is None or tensor.data is not array:
                    array = bound[slot.slot] = np.array(array, copy=True)
            tensor = tensors.get(i)
            if tensor is None or tensor.data is not array:
                tensors[i] = Tensor(array, shared_memory=True)
        return bound

    def _filled(self, position: int):
        tensor = self._tensors.get(position)
        return None if tensor is None else tensor.data

    def _run(self, bound) -> Results:
        profile = {} if self.compiled.properties.perf_count else None
        started = time.perf_counter()
        results = self.compiled._infer(bound, variables=self._variables, profile=profile)
        self._latency = (time.perf_counter() - started) * 1e3
        self._profile = profile
        for i, tensor in self._output_tensors.items():
            value = results[i]
            tensor.set_shape(value.shape)
            np.copyto(tensor.data, value, casting="unsafe")
        self.results = results
        return results

    def infer_new_request(self, inputs=None) -> Results:
        return self.compiled.create_infer_request().infer(inputs)

    @property
    def latency(self) -> float:
        """The last run's time in milliseconds."""
        return self._latency

    def get_profiling_info(self) -> list[ProfilingInfo]:
        """Each layer's time in the last run (compile with the ``PERF_COUNT`` property, as
        OpenVINO needs; without it every layer is listed as not run)."""
        times = self._profile
        # the run loop keys its times by the layer ids of the steps' locations (strings); a
        # fused step's time is its last layer's (runtime/fusion.py)
        return [ProfilingInfo(n.name, n.type, None if times is None
                              else times.get(str(n.id), 0.0))
                for n in self.compiled.model.topological_order()]

    @property
    def profiling_info(self) -> list[ProfilingInfo]:
        return self.get_profiling_info()

    # --- asynchronous runs -----------------------------------------------------------------

    def _check_idle(self, what: str) -> None:
        if not self._done.is_set():
            raise RuntimeError(f"{what}: the request is busy with an asynchronous run; wait() "
                               f"for it first")

    def start_async(self, inputs=None, userdata=None, share_inputs: bool = False) -> None:
        """Start a run on the request's worker thread and return. The inputs are checked
        (and, without ``share_inputs``, copied) now; errors of the run itself come from
        ``wait()``. The callback set by ``set_callback`` is called with ``userdata`` when it
        ends, on that thread."""
        self._check_idle("start_async")
        bound = self._bind(inputs, copy=not share_inputs)
        if userdata is not None:
            self.userdata = userdata
        self._error = None
        self._done.clear()
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            self._worker = threading.Thread(target=_work, args=(self._jobs,),
                                            name="irexec-infer", daemon=True)
            self._worker.start()
        self._jobs.put(self._job(bound))

    def _job(self, bound):
        def run():
            try:
                self._run(bound)
                if self._callback is not None:
                    self._callback(self.userdata)
            except BaseException as e:  # handed to wait()
                self._error = e
            finally:
                self._done.set()
                if self._on_done is not None:
                    self._on_done()
        return run

    def wait(self) -> None:
        """Wait for the asynchronous run; raise what it raised."""
        self._done.wait()
        error, self._error = self._error, None
        if error is not None:
            raise error

    def wait_for(self, timeout: int) -> bool:
        """Wait up to ``timeout`` milliseconds (-1: as long as it takes); True if the run has
        ended (raising what it raised), False if it is still going."""
        if not self._done.wait(None if timeout is None or timeout < 0 else timeout / 1e3):
            return False
        self.wait()
        return True

    def __del__(self):
        jobs = self._jobs
        if jobs is not None:
            jobs.put(None)  # the worker thread ends

    def set_callback(self, callback, userdata=None) -> None:
        """``callback(userdata)`` after each asynchronous run, on the run's thread."""
        self._callback = callback
        self.userdata = userdata

    def cancel(self) -> None:
        """Runs cannot be stopped midway here: the run in progress completes."""

    # --- tensors ---------------------------------------------------------------------------

    def _input_position(self, key) -> int | None:
        if isinstance(key, OutputPort) and any(key is p for p in self.compiled.model.outputs):
            return None
        try:
            return self.compiled._input_position(key)
        except Exception:  # noqa: BLE001  (a key of another kind: not an input)
            return None

    def _output_position(self, key) -> int | None:
        try:
            return self._index.position(key)
        except TypeError:
            return None

    def _input_tensor(self, i: int) -> Tensor:
        tensor = self._tensors.get(i)
        if tensor is None:  # zeros to fill; a dynamic dim is 0 until ``tensor.shape = ...``
            port = self.compiled.model.inputs[i]
            tensor = self._tensors[i] = Tensor(port.element_type, _blank_dims(port))
        return tensor

    def _output_tensor(self, i: int) -> Tensor:
        tensor = self._output_tensors.get(i)
        if tensor is not None:
            return tensor
        if i < len(self.results):
            return Tensor(self.results[i], shared_memory=True)
        port = self.compiled.model.outputs[i]
        if port.element_type is not None and port.element_type.dtype is not None:
            return Tensor(port.element_type, _blank_dims(port))  # before any run: zeros
        raise RuntimeError(f"output {port.get_any_name()!r} has no tensor yet: run first")

    def get_tensor(self, key) -> Tensor:
        """An input's tensor (the one given or set; for a static shape never given, one of
        zeros that the next ``infer()`` reads, so writing into its ``.data`` gives the
        input) or an output's from the last run, by name or port."""
        i = self._input_position(key)
        if i is not None:
            return self._input_tensor(i)
        o = self._output_position(key)
        if o is not None and o < len(self._index.ports):
            return self._output_tensor(o)
        raise RuntimeError(f"the model has no input or output {key!r}")

    def get_input_tensor(self, index: int | None = None) -> Tensor:
        return self._input_tensor(self._only("input", index))

    def get_output_tensor(self, index: int | None = None) -> Tensor:
        return self._output_tensor(self._only("output", index))

    def _only(self, what: str, index: int | None) -> int:
        count = len(self.compiled.model.inputs if what == "input" else self._index.ports)
        if index is None:
            if count != 1:
                raise RuntimeError(f"get_{what}_tensor() without an index needs a model of "
                                   f"one {what}; this one has {count}")
            return 0
        if not 0 <= index < count:
            raise RuntimeError(f"{what} index {index} is out of range: the model has {count}")
        return index

    def set_tensor(self, key, tensor) -> None:
        """An input's value for the next runs (a Tensor or an array, checked now: element
        type, converted as OpenVINO converts, and shape), or an output's tensor, which each
        run then fills (as OpenVINO writes into a tensor set for an output)."""
        i = self._input_position(key)
        if i is not None:
            self._set_input(i, tensor)
            return
        o = self._output_position(key)
        if o is None or o >= len(self._index.ports):
            raise RuntimeError(f"set_tensor: the model has no input or output {key!r}")
        self._set_output(o, tensor)

    def _set_input(self, i: int, tensor) -> None:
        array = self.compiled._bind_one(i, tensor)
        if isinstance(tensor, Tensor) and tensor.data is array:
            self._tensors[i] = tensor
        else:
            self._tensors[i] = Tensor(array, shared_memory=True)

    def _set_output(self, o: int, tensor) -> None:
        self._output_tensors[o] = tensor if isinstance(tensor, Tensor) else \
            Tensor(tensor, shared_memory=True)

    def set_tensors(self, tensors: dict) -> None:
        for key, tensor in tensors.items():
            self.set_tensor(key, tensor)

    def set_input_tensor(self, index_or_tensor, tensor=None) -> None:
        """``set_input_tensor(tensor)`` for a model of one input, or
        ``set_input_tensor(index, tensor)``."""
        if tensor is None:
            self._set_input(self._only("input", None), index_or_tensor)
        else:
            self._set_input(self._only("input", index_or_tensor), tensor)

    def set_input_tensors(self, tensors) -> None:
        """A dict {index: tensor}; or a list of tensors for a model of one input, joined
        along the first axis (OpenVINO's batch of tensors)."""
        if isinstance(tensors, dict):
            for index, tensor in tensors.items():
                self.set_input_tensor(index, tensor)
            return
        arrays = [t.data if isinstance(t, Tensor) else np.asarray(t) for t in tensors]
        self.set_input_tensor(Tensor(np.concatenate(arrays, axis=0), shared_memory=True))

    def set_output_tensor(self, index_or_tensor, tensor=None) -> None:
        if tensor is None:
            self._set_output(self._only("output", None), index_or_tensor)
        else:
            self._set_output(self._only("output", index_or_tensor), tensor)

    def set_output_tensors(self, tensors: dict) -> None:
        for index, tensor in tensors.items():
            self.set_output_tensor(index, tensor)

    @property
    def input_tensors(self) -> list[Tensor]:
        return [self._input_tensor(i) for i in range(len(self.compiled.model.inputs))]

    @property
    def output_tensors(self) -> list[Tensor]:
        return [self._output_tensor(i) for i in range(len(self._index.ports))]

    @property
    def model_inputs(self) -> list[OutputPort]:
        return self.compiled.model.inputs

    @property
    def model_outputs(self) -> list[OutputPort]:
        return self.compiled.model.outputs

    inputs = model_inputs
    outputs = model_outputs

    def get_compiled_model(self):
        return self.compiled

    # --- state -----------------------------------------------------------------------------

    def query_state(self) -> list[VariableState]:
        """The model's variables (every ReadValue's variable_id), in model order."""
        return variable_states(self.compiled.model, self._variables)

    def reset_state(self) -> None:
        """Every variable back to its initial value."""
        self._variables.clear()

    def __repr__(self) -> str:
        return f"<InferRequest of {self.compiled.model.name!r}>"


def _blank_dims(port) -> list[int]:
    """The dims of a tensor made before any value: each dim's size, 0 where it is dynamic (as
    OpenVINO's request makes them); a dynamic rank is [0]."""
    shape = port.partial_shape
    if shape is None or not shape.rank_is_static:
        return [0]
    return [d.min if d.is_static else 0 for d in shape]


def _work(jobs: queue.SimpleQueue) -> None:
    """A request's worker thread: runs the jobs ``start_async`` hands it, one at a time, until
    the request is gone (None). It holds the request only while a job runs."""
    while True:
        job = jobs.get()
        if job is None:
            return
        job()
        job = None


class AsyncInferQueue:
    """OpenVINO's ``AsyncInferQueue``: ``jobs`` requests of one compiled model (0: the
    compiled model's OPTIMAL_NUMBER_OF_INFER_REQUESTS, at least 2 here, so that two runs
    overlap). ``start_async(inputs, userdata)`` takes the next idle request (waiting for one
    if all are busy); the callback set by ``set_callback`` gets ``(request, userdata)``;
    ``wait_all()`` waits for every run and raises the first error one raised."""

    def __init__(self, compiled, jobs: int = 0):
        if jobs <= 0:
            jobs = max(2, compiled.properties.optimal_requests())
        self._requests = [compiled.create_infer_request() for _ in range(jobs)]
        self._idle = list(range(jobs))
        self._cond = threading.Condition()
        self._callback = None
        self._userdata: list = [None] * jobs
        self._errors: list[BaseException] = []
        for i, request in enumerate(self._requests):
            request.set_callback(self._user_callback(i))
            request._on_done = self._idle_again(i)

    def _user_callback(self, i: int):
        def call(userdata):
            if self._callback is not None:
                self._callback(self._requests[i], userdata)
        return call

    def _idle_again(self, i: int):
        def idle():
            with self._cond:
                self._idle.append(i)
                self._cond.notify_all()
        return idle

    def __len__(self) -> int:
        return len(self._requests)

    def __iter__(self):
        return iter(self._requests)

    def __getitem__(self, i: int) -> InferRequest:
        return self._requests[i]

    @property
    def userdata(self) -> list:
        return list(self._userdata)

    def set_callback(self, callback) -> None:
        """``callback(request, userdata)`` after each run, on the run's thread."""
        self._callback = callback

    def is_ready(self) -> bool:
        """True if some request is idle (``start_async`` would not wait)."""
        with self._cond:
            return bool(self._idle)

    def get_idle_request_id(self) -> int:
        """The index of an idle request, waiting for one if all are busy."""
        with self._cond:
            self._cond.wait_for(lambda: self._idle)
            return self._idle[0]

    def start_async(self, inputs=None, userdata=None, share_inputs: bool = False) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._idle)
            i = self._idle.pop(0)
        request = self._requests[i]
        try:
            self._collect(request)
            self._userdata[i] = request.userdata = userdata
            request.start_async(inputs, share_inputs=share_inputs)
        except BaseException:
            with self._cond:
                self._idle.append(i)
                self._cond.notify_all()
            raise

    def _collect(self, request: InferRequest) -> None:
        """Keep the error of the request's last run (if any) for ``wait_all``."""
        try:
            request.wait()
        except BaseException as e:  # noqa: BLE001
            self._errors.append(e)

    def wait_all(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: len(self._idle) == len(self._requests))
        for request in self._requests:
            self._collect(request)
        if self._errors:
            error, self._errors = self._errors[0], []
            raise error

    def __repr__(self) -> str:
        return f"<AsyncInferQueue: {len(self._requests)} requests>"
