"""Traces: every layer's outputs while a compiled model runs (``compiled(inputs, trace=...)``).

A trace is told each layer's outputs as the run loop makes them: the Parameters first (their
values are the inputs), then every computed layer in the order the model runs them -- layers
the plan folded into constants too (computed again for the trace). Constants are not traced (they
are the weights, unchanged by running) and neither are Results (their value is their input's).

``trace`` is either a directory, where each output is saved as ``.npy`` named by its layer with an
``index.json`` listing them in run order, or a callable ``trace(layer, port, array)`` (layer: the
``Node``; port: the output port's index) for code that wants the arrays in memory. Tracing changes
nothing else: the outputs are the same arrays, computed by the same kernels.

On request (``bodies=True``; ``irexec run --trace DIR --trace-bodies``) the layers inside
sub-graphs are traced too, once per iteration: a body layer reaches the trace as a
:class:`BodyLayer` named ``<outer layer>/<body>/<iteration>/<layer>`` (nested bodies add their own
steps), after which its outer layer's own outputs follow.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

import numpy as np

from irexec.errors import IRError
from irexec.io import safe_write
from irexec.io.arrays import from_file, to_file
from irexec.ir import element_type as et_table
from irexec.ir.model import Model, Node
from irexec.diagnostics.diagnostic import Location

INDEX = "index.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class BodyLayer:
    """A layer of a sub-graph as a trace sees it, in one iteration: ``name`` is its path
    ``<outer layer>/<body>/<iteration>/<layer>``, ``id`` the same path of ids; ``node`` is the
    body's own layer, whose type, version and outputs it shows."""

    def __init__(self, node, outer: Node, body: str, iteration: int):
        self.node, self.iteration = node, iteration
        self.name = f"{outer.name}/{body}/{iteration}/{node.name}"
        self.id = f"{outer.id}/{body}/{iteration}/{node.id}"
        self.type, self.version, self.outputs = node.type, node.version, node.outputs

    def __repr__(self) -> str:
        return f"<BodyLayer {self.name!r}>"


# The tracer of the run under way when it traces bodies too (read by the layers that run one).
_BODY_TRACER: ContextVar[Tracer | None] = ContextVar("irexec_body_tracer", default=None)


def body_trace(outer: Node, body: str) -> Callable | None:
    """For a layer about to run its body once: the trace of that iteration, or None when the
    run traces no bodies."""
    tracer = _BODY_TRACER.get()
    return None if tracer is None else tracer.iteration_trace(outer, body)


def traces_bodies() -> bool:
    """Whether the run under way traces the layers of sub-graphs (they must then run one layer
    at a time, through the run loop)."""
    return _BODY_TRACER.get() is not None


class Tracer:
    """What the run loop holds while tracing: it hands each layer's outputs to the trace."""

    def __init__(self, trace, model: Model, bodies: bool = False):
        if isinstance(trace, (str, os.PathLike)):
            trace = DirectoryTrace(trace, model)
        elif not callable(trace):
            raise TypeError(f"trace must be a directory path or a callable, "
                            f"not {type(trace).__name__}")
        self.trace: Callable[[Node, int, np.ndarray], None] = trace
        self.bodies = bodies
        self._nodes = {str(n.id): n for n in model.nodes}
        self._iterations: dict[tuple[int, str], int] = {}

    def activate(self):
        """Make this the tracer body layers report to (when it traces bodies); returns the
        token to give :meth:`deactivate`."""
        return _BODY_TRACER.set(self if self.bodies else None)

    @staticmethod
    def deactivate(token) -> None:
        _BODY_TRACER.reset(token)

    def iteration_trace(self, outer: Node, body: str) -> Callable:
        """The trace of ``outer``'s next run of ``body`` (iterations counted from 0 per run)."""
        key = (outer.id, body)
        iteration = self._iterations.get(key, 0)
        self._iterations[key] = iteration + 1
        parent = self.trace

        def trace(layer, port: int, array: np.ndarray) -> None:
            parent(BodyLayer(layer, outer, body, iteration), port, array)
        return trace

    def inputs(self, plan, values: list) -> None:
        self._plan = plan
        self._done = 0  # steps traced so far
        self._next_fold = 0
        self._folded: dict[int, np.ndarray] = {}
        for slot in plan.inputs:
            self.trace(self._nodes[slot.location.layer_id], 0, values[slot.slot])

    def step(self, step, values: list) -> None:
        self._folds(self._done)
        self._done += 1
        node = self._nodes[step.location.layer_id]
        for port, s in enumerate(step.outputs):
            if values[s] is not None:  # an output no layer reads may not be computed
                self.trace(node, port, values[s])

    def finish(self) -> None:
        """The run succeeded: the folded layers after the last step."""
        self._folds(self._done)

    def _folds(self, before: int) -> None:
        """The layers the plan folded into constants that come before step ``before``: computed
        again here, from the Constants, in the order the model runs them."""
        plan, folded = self._plan, self._plan.folded
        while self._next_fold < len(folded) and folded[self._next_fold][0] <= before:
            step = folded[self._next_fold][1]
            self._next_fold += 1
            args = [self._folded[s] if s in self._folded else plan.constant_nodes[s].value
                    for s in step.inputs]
            result = step.kernel(*args)
            results = result if len(step.outputs) > 1 else (result,)
            node = self._nodes[step.location.layer_id]
            for port, (s, r) in enumerate(zip(step.outputs, results)):
                self._folded[s] = r
                if r is not None:
                    self.trace(node, port, r)

    def close(self) -> None:
        """The run ended (or failed): let the trace finish (a folder writes its index)."""
        close = getattr(self.trace, "close", None)
        if close is not None:
            close()


# Names Windows reserves for devices, whatever the extension ("con.npy" opens the console).
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
             *(f"lpt{i}" for i in range(10))}
MAX_STEM = 100  # characters (ASCII: also bytes), leaving room for a suffix on any file system


def file_stem(name: str) -> str:
    """A layer name as a file name safe on every file system: runs of characters other than
    letters, digits, '.', '_' and '-' become '_' (OpenVINO names such as '/encoder/Reverse:0'
    hold '/' and ':'); no leading or trailing dot; no name Windows reserves for a device; at
    most MAX_STEM characters."""
    stem = _UNSAFE.sub("_", name).strip(".")[:MAX_STEM].rstrip(".") or "layer"
    if stem.split(".")[0].lower() in _RESERVED:
        stem = "_" + stem
    return stem


class DirectoryTrace:
    """Writes ``DIR/<layer>.npy`` (``<layer>.<port>.npy`` for a layer of several outputs), and
    ``DIR/index.json`` when the run ends -- also when it fails part-way, listing what it did
    compute.

    Each file is written atomically (irexec/io/safe_write.py) and never over a file this trace
    did not make: not over ``protected`` files (the model, the inputs), nor over any other file
    already in DIR, except the files an earlier trace's ``index.json`` there lists (a trace run
    again into its folder replaces itself). A name that is taken gets a suffix (``~<id>``)."""

    def __init__(self, folder, model: Model, protected=()):
        self.folder = Path(folder)
        self.model = model
        self.entries: list[dict] = []
        self.protected = protected
        self._used: set[str] = set()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise IRError.make("IR001", f"cannot create the trace folder '{folder}': "
                                        f"{e.strerror or e}", Location(str(folder))) from None
        if not self.folder.is_dir():
            raise IRError.make("IR001", f"the trace folder '{folder}' is not a folder",
                               Location(str(folder)))
        self._replaceable = self._earlier_trace()
        self._taken = {p.name.lower() for p in self._listing()} - self._replaceable

    def _listing(self) -> list[Path]:
        try:
            return list(self.folder.iterdir())
        except OSError as e:
            raise IRError.make("IR001", f"cannot list the trace folder '{self.folder}': "
                                        f"{e.strerror or e}", Location(str(self.folder))) from None

    def _earlier_trace(self) -> set[str]:
        """The lower-case names of the files an earlier trace's index.json lists (and the index
        itself); IRError when DIR holds an index.json that is not a trace's."""
        index = self.folder / INDEX
        if not index.exists():
            return set()
        try:
            entries = json.loads(index.read_text(encoding="utf-8"))["layers"]
            names = {str(e["file"]).lower() for e in entries}
        except (OSError, ValueError, KeyError, TypeError):
            raise IRError.make("IR001", f"'{index}' is not the index of an irexec trace; irexec "
                                        f"never writes over it: trace into another folder",
                               Location(str(index))) from None
        return {n for n in names if "/" not in n and "\\" not in n} | {INDEX}

    def _file_name(self, node: Node, port: int) -> str:
        stem = file_stem(node.name)
        if len(node.outputs) > 1:
            stem = f"{stem}.{port}"
        name = f"{stem}.npy"
        n = 1
        # Two names that differ only in unsafe characters or case, or a file this run did not
        # make (a protected one included), get a suffix.
        while name.lower() in self._used or name.lower() in self._taken \
                or self._is_protected(name):
            name = f"{stem}~{node.id}.npy" if n == 1 else f"{stem}~{node.id}~{n}.npy"
            n += 1
        self._used.add(name.lower())
        return name

    def _is_protected(self, name: str) -> bool:
        try:
            safe_write.check_target(self.folder / name, self.protected)
        except safe_write.WriteRefused:
            return True
        return False

    def _write(self, name: str, write) -> None:
        try:
            safe_write.write_file(self.folder / name, write, self.protected)
        except (OSError, safe_write.WriteRefused) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else e
            raise IRError.make("IR001", f"cannot write the trace file '{self.folder / name}': "
                                        f"{reason}", Location(str(self.folder))) from None

    def __call__(self, node: Node, port: int, array: np.ndarray) -> None:
        name = self._file_name(node, port)
        array = np.asarray(array)
        saved = to_file(array)  # no pickles; narrow types as docs/element-types.md says
        self._write(name, lambda f: np.lib.format.write_array(f, saved, allow_pickle=False))
        try:
            type_name = et_table.from_dtype(array.dtype).name
        except KeyError:
            type_name = str(array.dtype)
        self.entries.append({
            "layer": node.name, "id": node.id, "type": node.type, "version": node.version,
            "port": port, "file": name, "element_type": type_name, "shape": list(array.shape),
            "crc32": _crc32(array),
        })

    def close(self) -> None:
        index = {"model": self.model.path, "layers": self.entries}
        text = (json.dumps(index, indent=1) + "\n").encode("utf-8")
        self._write(INDEX, lambda f: f.write(text))


def _crc32(array: np.ndarray) -> str | None:
    """The CRC-32 `irexec run` prints for numeric arrays; None for strings."""
    if array.dtype.kind == "O":
        return None
    return f"{zlib.crc32(np.ascontiguousarray(array).tobytes()):08x}"


def load_trace(folder) -> dict[tuple[str, int], np.ndarray]:
    """A trace folder read back: ``{(layer name, port): array}`` in run order, each array in
    irexec's in-memory form (the files hold narrow types as docs/element-types.md says)."""
    folder = Path(folder)
    index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    out = {}
    for e in index["layers"]:
        array = np.load(folder / e["file"], allow_pickle=False)
        try:
            et = et_table.from_name(e["element_type"])
        except KeyError:
            et = None
        out[(e["layer"], e["port"])] = from_file(array, et) if et is not None else array
    return out
