"""Pickling ``Model`` and ``CompiledModel``: ship the recipe, not the objects.

A model's layers hold op classes, bound kernels, compiled plans and views of a weights file, none
of which pickle (or should: they are many small objects, and a plan is cheaper to make again than
to send). So a model pickles as its IR: the text of its ``.xml`` and the bytes of its ``.bin`` as
``irexec/io/ir_writer.py`` writes them, with a SHA-256 of both. Unpickling checks the digest (a
payload damaged on the way is an error, never a different model), reads the IR back as
``read_model`` does, takes every Const's payload into memory (so nothing stays on disk), and gives
the model back the path it was read from, which its messages name. A ``CompiledModel`` pickles as
its model plus its compile config and is compiled again on arrival.

``ModelSource`` is the same recipe made once and kept, for senders of one model to many places
(irexec/batch/): it either carries the bytes (``ModelSource.of_model``) or only a file's path and
digest (``ModelSource.of_file``), checked on arrival; a worker that lacks the file, or finds
other bytes there, says so. ``ModelSource.load`` caches per process by digest, so a worker
rebuilds a model once however many tasks bring it.

NOTE for developers: ``Model`` lives in ``ir/`` (which knows no file format) and
``CompiledModel`` in ``runtime/`` (below ``api``), so the reduce functions are attached here, at
the API's layer, when the package is imported (``irexec/__init__`` imports this module); the
same way ``api.py`` attaches ``Model.reinfer``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field

from irexec.api import compile_model, read_model
from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError
from irexec.ir.model import Model
from irexec.runtime.compiled_model import CompiledModel


def _digest(xml: bytes, weights: bytes) -> str:
    h = hashlib.sha256()
    h.update(len(xml).to_bytes(8, "little"))
    h.update(xml)
    h.update(weights)
    return h.hexdigest()


def _file_digest(xml_path: str, bin_path: str | None) -> str:
    """The digest of an .xml and its .bin (an absent .bin counts as empty), read in blocks."""
    h = hashlib.sha256()
    h.update(os.path.getsize(xml_path).to_bytes(8, "little"))
    for path in (xml_path, bin_path):
        if path is None or (path == bin_path and not os.path.exists(path)):
            continue
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def _load_everything(model: Model) -> None:
    """Read every Const's payload (bodies' too) into memory, so the files may go."""
    for node in model.nodes:
        node.value  # noqa: B018  (a property that loads a pending payload)
        for body in node.bodies.values():
            _load_everything(body.model)


def _rename(model: Model, path: str | None) -> None:
    """Say ``path`` wherever the model (and its bodies) name the file they came from."""
    model.path = path
    for node in model.nodes:
        node.file = path
        for body in node.bodies.values():
            _rename(body.model, path)


def model_from_bytes(xml: bytes, weights: bytes, path: str | None = None) -> Model:
    """``read_model`` of IR held in memory; the model names ``path`` as its file."""
    folder = tempfile.mkdtemp(prefix="irexec-model-")
    try:
        xml_path = os.path.join(folder, "model.xml")
        bin_path = os.path.join(folder, "model.bin")
        with open(xml_path, "wb") as f:
            f.write(xml)
        with open(bin_path, "wb") as f:
            f.write(weights)
        model = read_model(xml_path, bin_path)
        _load_everything(model)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    _rename(model, path)
    return model


@dataclass
class ModelSource:
    """A model as something to send: its IR bytes, or the path of its files, with a digest."""

    digest: str
    path: str | None  # the .xml it was read from, for messages (and to read, without bytes)
    weights_path: str | None = None
    xml: bytes | None = field(default=None, repr=False)
    weights: bytes | None = field(default=None, repr=False)

    @classmethod
    def of_model(cls, model: Model) -> ModelSource:
        from irexec.io.ir_writer import ir_bytes

        xml, weights = ir_bytes(model)
        return cls(_digest(xml, weights), model.path, None, xml, weights)

    @classmethod
    def of_file(cls, xml_path, weights_path=None, with_bytes: bool = False) -> ModelSource:
        """The files themselves: the receiver reads them where they are (a shared folder) and
        checks the digest; ``with_bytes`` also carries their bytes, for receivers without them."""
        xml_path = os.path.abspath(os.fspath(xml_path))
        weights_path = os.path.abspath(os.fspath(weights_path)) if weights_path else \
            os.path.splitext(xml_path)[0] + ".bin"
        digest = _file_digest(xml_path, weights_path)
        if not with_bytes:
            return cls(digest, xml_path, weights_path)
        with open(xml_path, "rb") as f:
            xml = f.read()
        weights = b""
        if os.path.exists(weights_path):
            with open(weights_path, "rb") as f:
                weights = f.read()
        source = cls(_digest(xml, weights), xml_path, weights_path, xml, weights)
        return source

    def without_bytes(self) -> ModelSource:
        return ModelSource(self.digest, self.path, self.weights_path)

    def found_here(self) -> bool:
        """Whether this machine has the model's files, with the sender's digest."""
        try:
            return self.path is not None and _file_digest(self.path, self.weights_path) == \
                self.digest
        except OSError:
            return False

    def read(self) -> Model:
        """The model, read afresh (IRError if the bytes or the file are not what was sent)."""
        if self.xml is not None:
            if _digest(self.xml, self.weights or b"") != self.digest:
                raise IRError.make("IR001", "the model's bytes arrived damaged (their SHA-256 "
                                            "differs from the sender's)", Location(self.path))
            return model_from_bytes(self.xml, self.weights or b"", self.path)
        try:
            found = _file_digest(self.path, self.weights_path)
        except OSError as e:
            raise IRError.make("IR001", f"this machine cannot read the model's file: "
                                        f"{e.strerror or e}; share the folder or send the model's "
                                        f"bytes", Location(self.path)) from None
        if found != self.digest:
            raise IRError.make("IR001", "the model's files here differ from the sender's (their "
                                        "SHA-256 differs); share the same files or send the "
                                        "model's bytes", Location(self.path))
        return read_model(self.path, self.weights_path)

    def compile(self, config: dict | None = None, budget: int | None = None) -> CompiledModel:
        """The compiled model, made once per process for each digest, config and memory budget
        (``budget``: the one the caller compiles within, part of the key since a plan is checked
        against the budget it was made under)."""
        key = _key(self.digest, config, budget)
        with _cache_lock:
            found = _compiled.get(key)
        if found is None:
            found = compile_model(self.read(), config=config)
            with _cache_lock:
                _compiled.clear()  # one model at a time per worker: a new job drops the old
                _compiled[key] = found
        return found

    def remember(self, compiled: CompiledModel, config: dict | None = None,
                 budget: int | None = None) -> None:
        """Take ``compiled`` (this very model, already compiled here with ``config`` within
        ``budget``) as this process's copy."""
        with _cache_lock:
            _compiled.clear()
            _compiled[_key(self.digest, config, budget)] = compiled


def _key(digest: str, config: dict | None, budget: int | None):
    return digest, repr(sorted((config or {}).items())), budget


_compiled: dict = {}
_cache_lock = threading.Lock()


def _rebuild_model(source: ModelSource) -> Model:
    return source.read()


def _rebuild_compiled(source: ModelSource, config: dict | None) -> CompiledModel:
    return compile_model(source.read(), config=config)


def _reduce_model(model: Model):
    return _rebuild_model, (ModelSource.of_model(model),)


def _reduce_compiled(compiled: CompiledModel):
    # the config as the compiled model reads it, each key only where it is not the default
    config = {key: value for key, value, default in (
        ("precision", compiled.precision, "f32"),
        ("decompression", compiled.decompression, "fused"),
        ("fusion", compiled.fusion, "on")) if value != default}
    return _rebuild_compiled, (ModelSource.of_model(compiled.model), config or None)


Model.__reduce__ = _reduce_model
CompiledModel.__reduce__ = _reduce_compiled

__all__ = ["ModelSource", "model_from_bytes"]
