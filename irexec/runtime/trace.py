"""Traces: every layer's outputs while a compiled model runs (``compiled(inputs, trace=...)``).

A trace is told each layer's outputs as the run loop makes them: the Parameters first (their
values are the inputs), then every computed layer in the order the model runs them -- layers
the plan folded into constants too (computed again for the trace). Constants are not traced (they
are the weights, unchanged by running) and neither are Results (their value is their input's).

``trace`` is either a directory, where each output is saved as ``.npy`` named by its layer with an
``index.json`` listing them in run order, or a callable ``trace(layer, port, array)`` (layer: the
``Node``; port: the output port's index) for code that wants the arrays in memory. Tracing changes
nothing else: the outputs are the same arrays, computed by the same kernels.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from irexec.errors import IRError
from irexec.io.arrays import from_file, to_file
from irexec.ir import element_type as et_table
from irexec.ir.model import Model, Node
from irexec.diagnostics.diagnostic import Location

INDEX = "index.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Tracer:
    """What the run loop holds while tracing: it hands each layer's outputs to the trace."""

    def __init__(self, trace, model: Model):
        if isinstance(trace, (str, os.PathLike)):
            trace = DirectoryTrace(trace, model)
        elif not callable(trace):
            raise TypeError(f"trace must be a directory path or a callable, "
                            f"not {type(trace).__name__}")
        self.trace: Callable[[Node, int, np.ndarray], None] = trace
        self._nodes = {str(n.id): n for n in model.nodes}

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
                self.trace(node, port, r)

    def close(self) -> None:
        """The run ended (or failed): let the trace finish (a folder writes its index)."""
        close = getattr(self.trace, "close", None)
        if close is not None:
            close()


def file_stem(name: str) -> str:
    """A layer name as a file name: runs of characters other than letters, digits, '.', '_' and
    '-' become '_' (OpenVINO names such as '/encoder/Reverse:0' hold '/' and ':')."""
    stem = _UNSAFE.sub("_", name).strip(".") or "layer"
    return stem[:120]


class DirectoryTrace:
    """Writes ``DIR/<layer>.npy`` (``<layer>.<port>.npy`` for a layer of several outputs), and
    ``DIR/index.json`` when the run ends -- also when it fails part-way, listing what it did
    compute."""

    def __init__(self, folder, model: Model):
        self.folder = Path(folder)
        self.model = model
        self.entries: list[dict] = []
        self._used: set[str] = set()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise IRError.make("IR001", f"cannot create the trace folder '{folder}': "
                                        f"{e.strerror or e}", Location(str(folder))) from None

    def _file_name(self, node: Node, port: int) -> str:
        stem = file_stem(node.name)
        if len(node.outputs) > 1:
            stem = f"{stem}.{port}"
        name = f"{stem}.npy"
        if name.lower() in self._used:  # two names that differ only in unsafe characters or case
            name = f"{stem}~{node.id}.npy"
        self._used.add(name.lower())
        return name

    def __call__(self, node: Node, port: int, array: np.ndarray) -> None:
        name = self._file_name(node, port)
        array = np.asarray(array)
        saved = to_file(array)  # no pickles; narrow types as docs/element-types.md says
        try:
            with open(self.folder / name, "wb") as f:
                np.lib.format.write_array(f, saved, allow_pickle=False)
        except OSError as e:
            raise IRError.make("IR001", f"cannot write the trace file '{self.folder / name}': "
                                        f"{e.strerror or e}", Location(str(self.folder))) from None
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
        tmp = self.folder / f".{INDEX}.tmp"
        tmp.write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.folder / INDEX)


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
