"""Run-time objects of OpenVINO's Python API, over irexec's own (``Core`` is in irexec/api.py):

* the devices: ``["CPU"]``, irexec running with numpy on the CPU; ``"AUTO"`` is taken as CPU
  too, any other device name is refused;
* ``Tensor``: an array with its element type and shape (``.data`` is the numpy array);
* ``Results``: what a compiled model returns, OpenVINO's ``OVDict``: a read-only mapping from
  the model's output ports to arrays, also indexed by output index and by any of an output's
  names (``outputs["name"]`` as irexec always had); ``by_name()`` gives irexec's plain dict.

Where irexec and OpenVINO both have a name, it means the same thing (the tests compare them);
README.md has the table of what exists.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType
from irexec.ir.model import OutputPort
from irexec.ir.shape import Shape

DEVICES = ("CPU",)
ALIASES = ("AUTO", "AUTO:CPU")  # OpenVINO's automatic choice: here it can only choose the CPU


def check_device(device: str | None) -> None:
    """RuntimeError (as OpenVINO raises for a device it does not know) naming the devices."""
    if device is None or device.upper() in DEVICES + ALIASES:
        return
    raise RuntimeError(f"device {device!r} is not available: irexec runs models with numpy on "
                       f"the CPU; its devices are {', '.join(map(repr, DEVICES))} (and "
                       f"'AUTO', which picks it)")


class Tensor:
    """A tensor as OpenVINO's Python API shows one: ``Tensor(array)`` copies the array
    (``shared_memory=True`` wraps it instead), ``Tensor(element_type, shape)`` makes one of
    zeros, ``Tensor(list)`` one of the list's values. ``.data`` is the numpy array itself
    (writable); setting ``.shape`` gives a new array of that shape (OpenVINO's ``set_shape``)."""

    def __init__(self, array_or_type, shape=None, *, shared_memory: bool = False):
        if shape is not None and not isinstance(array_or_type, np.ndarray):
            et = et_table.lookup(array_or_type)
            self._data = np.zeros(tuple(int(d) for d in shape),
                                  et.dtype if et.dtype is not None else object)
        else:
            array = np.asarray(array_or_type)
            if array.dtype.kind == "U":  # text: held as object arrays of str, as irexec runs it
                array = array.astype(object)
            self._data = array if shared_memory else array.copy()
            if shape is not None:
                self._data = self._data.reshape(tuple(shape))

    @property
    def data(self) -> np.ndarray:
        return self._data

    def get_shape(self) -> Shape:
        return Shape(self._data.shape)

    def set_shape(self, shape) -> None:
        """A new shape: the same array when the shape does not change, else a new one of
        zeros (as OpenVINO reallocates)."""
        shape = tuple(int(d) for d in shape)
        if shape != self._data.shape:
            self._data = np.zeros(shape, self._data.dtype)

    @property
    def shape(self) -> Shape:
        return self.get_shape()

    @shape.setter
    def shape(self, shape) -> None:
        self.set_shape(shape)

    def get_element_type(self) -> ElementType:
        return et_table.from_dtype(self._data.dtype)

    @property
    def element_type(self) -> ElementType:
        return self.get_element_type()

    def get_size(self) -> int:
        return int(self._data.size)

    @property
    def size(self) -> int:
        return self.get_size()

    def get_byte_size(self) -> int:
        return int(self._data.nbytes)

    @property
    def byte_size(self) -> int:
        return self.get_byte_size()

    def get_strides(self) -> list[int]:
        return list(self._data.strides)

    @property
    def strides(self) -> list[int]:
        return self.get_strides()

    def is_continuous(self) -> bool:
        return bool(self._data.flags["C_CONTIGUOUS"])

    def copy_to(self, other: Tensor) -> None:
        other.set_shape(self._data.shape)
        np.copyto(other.data, self._data)

    def copy_from(self, other) -> None:
        source = other.data if isinstance(other, Tensor) else np.asarray(other)
        self.set_shape(source.shape)
        np.copyto(self._data, source, casting="unsafe")

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __repr__(self) -> str:
        return f"<Tensor: shape{self.get_shape()} type: {self.get_element_type()}>"


class OutputIndex:
    """How a compiled model's Results find an output, made once per compiled model: the output
    ports in order and, for each key a caller may use (any of an output's names, irexec's
    output name, the port, the port of the layer producing it), the output's position."""

    __slots__ = ("ports", "names", "by_key", "by_id")

    def __init__(self, ports: list, names: list[str]):
        self.ports, self.names = tuple(ports), list(names)
        self.by_key: dict[str, int] = {}
        self.by_id: dict[int, int] = {}
        for i, (port, name) in enumerate(zip(self.ports, self.names)):
            self.by_key.setdefault(name, i)
            for n in port.names:
                self.by_key.setdefault(n, i)
            self.by_id[id(port)] = i
            source = getattr(port, "source", None)
            if source is not None:
                self.by_id.setdefault(id(source), i)

    def position(self, key) -> int | None:
        """The output ``key`` names: an index (negative from the end), a name, or a port
        (this model's, the layer output feeding its Result, or another model's with a name
        this one has); None if none."""
        if type(key) is str:
            return self.by_key.get(key)
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            n = len(self.ports)
            return int(key) % n if -n <= key < n else None
        if isinstance(key, OutputPort):
            i = self.by_id.get(id(key))
            if i is None and isinstance(key, str):  # another model's output: by its name
                i = self.by_key.get(str.__str__(key))
            if i is None:  # a layer's port of a copy of the model: by its tensor names
                i = next((self.by_key[n] for n in key.names if n in self.by_key), None)
            return i
        raise TypeError(f"outputs are chosen by index, name or port, not "
                        f"{type(key).__name__}")


class Results(Mapping):
    """A compiled model's outputs, as OpenVINO's ``OVDict``: a read-only mapping from output
    ports (``compiled.output(i)``, ``model.outputs``) to arrays; ``results[0]``,
    ``results["name"]`` (any name of the output) and ``results[port]`` all work. Iteration,
    ``keys()`` and ``items()`` give ports, as OpenVINO's; ``to_tuple()``, ``names()``,
    ``to_dict()`` (ports to arrays); ``by_name()`` is irexec's ``{output name: array}``."""

    __slots__ = ("_values", "_index")

    def __init__(self, values: list[np.ndarray], index: OutputIndex):
        self._values, self._index = values, index

    @classmethod
    def empty(cls, index: OutputIndex) -> Results:
        return cls([], OutputIndex([], []))

    def __getitem__(self, key) -> np.ndarray:
        i = self._index.position(key)
        if i is None or i >= len(self._values):
            raise KeyError(key)
        return self._values[i]

    def __iter__(self):
        return iter(self._index.ports[:len(self._values)])

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key) -> bool:
        try:
            i = self._index.position(key)
        except TypeError:
            return False
        return i is not None and i < len(self._values)

    def values(self):
        return list(self._values)

    def to_tuple(self) -> tuple:
        return tuple(self._values)

    def to_dict(self) -> dict:
        """A plain dict of output ports to arrays (OpenVINO's)."""
        return dict(zip(self._index.ports, self._values))

    def names(self) -> tuple[set[str], ...]:
        """Each output's names, in order."""
        return tuple(set(p.names) for p in self._index.ports[:len(self._values)])

    def by_name(self) -> dict[str, np.ndarray]:
        """irexec's form: ``{output name: array}`` in output order."""
        return dict(zip(self._index.names, self._values))

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{p.get_any_name()!r}: {v!r}"
                               for p, v in zip(self._index.ports, self._values)) + "}"


__all__ = ["OutputIndex", "Results", "Tensor", "check_device"]
