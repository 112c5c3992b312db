"""Run-time objects of OpenVINO's Python API, over irexec's own (``Core`` is in irexec/api.py):

* the devices: ``["CPU"]``, irexec running with numpy on the CPU; ``"AUTO"`` is taken as CPU
  too, any other device name is refused;
* ``Tensor``: an array with its element type and shape (``.data`` is the numpy array);
* ``Results``: what a compiled model returns, a dict of arrays by output name that is also
  indexed, as OpenVINO's results are, by output index and by output port.

Where irexec and OpenVINO both have a name, it means the same thing (the tests compare them);
README.md has the table of what exists.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from irexec.ir import element_type as et_table
from irexec.ir.element_type import ElementType
from irexec.ir.model import OutputPort

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
    zeros. ``.data`` is the numpy array itself (writable)."""

    def __init__(self, array_or_type, shape=None, *, shared_memory: bool = False):
        if shape is not None:
            et = array_or_type if isinstance(array_or_type, ElementType) else \
                et_table.from_name(str(array_or_type))
            self._data = np.zeros(tuple(shape), et.dtype if et.dtype is not None else object)
        else:
            array = np.asarray(array_or_type)
            self._data = array if shared_memory else array.copy()

    @property
    def data(self) -> np.ndarray:
        return self._data

    def get_shape(self) -> list[int]:
        return list(self._data.shape)

    @property
    def shape(self) -> list[int]:
        return self.get_shape()

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

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __repr__(self) -> str:
        return f"<Tensor: shape{self.get_shape()} type: {self.get_element_type()}>"


def port_names(ports: list[OutputPort], names: list[str]) -> dict[int, str]:
    """{id(port): output name} for the ports of a model's outputs, in the order of ``names``."""
    return {id(p): n for p, n in zip(ports, names) if p is not None}


class Results(dict):
    """A compiled model's outputs: ``{output name: array}``, also indexed by output index
    (``results[0]``) and by output port (``results[compiled.output(0)]``), as OpenVINO's
    results are. Iterating gives the names (OpenVINO's gives ports)."""

    def __init__(self, arrays: Mapping[str, np.ndarray],
                 ports: list[OutputPort] | dict[int, str]):
        """``ports``: the output port of each array in order, or that mapping already made
        by :func:`port_names` (a compiled model makes it once)."""
        super().__init__(arrays)
        self._names = list(arrays)
        self._ports = ports if isinstance(ports, dict) else port_names(ports, self._names)

    def _name(self, key):
        if isinstance(key, str):
            return key
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            return self._names[key] if -len(self._names) <= key < len(self._names) else None
        if isinstance(key, OutputPort):
            return self._ports.get(id(key))
        return None

    def __getitem__(self, key):
        name = self._name(key)
        if name is None or not dict.__contains__(self, name):
            raise KeyError(key)
        return dict.__getitem__(self, name)

    def __contains__(self, key) -> bool:
        name = self._name(key)
        return name is not None and dict.__contains__(self, name)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def to_dict(self) -> dict[str, np.ndarray]:
        """A plain dict by output name."""
        return dict(self)


__all__ = ["Results", "Tensor", "check_device"]
