"""The variables of a stateful model (ReadValue/Assign) for the call being run: a dict of
variable id -> array, owned by the infer request, set for the duration of each call. And
``LayerState``: what one layer keeps between the calls of its compiled model."""

from __future__ import annotations

import contextvars
import threading

import numpy as np

_CURRENT: contextvars.ContextVar[dict[str, np.ndarray] | None] = \
    contextvars.ContextVar("irexec_variables", default=None)


class using:
    """``with using(variables):`` the layers of the call in progress read and write
    ``variables`` (a class, not a generator: every call of a compiled model enters it)."""

    def __init__(self, variables: dict[str, np.ndarray]):
        self.variables = variables

    def __enter__(self):
        self.token = _CURRENT.set(self.variables)
        return self.variables

    def __exit__(self, *exc):
        _CURRENT.reset(self.token)


def current() -> dict[str, np.ndarray]:
    variables = _CURRENT.get()
    return variables if variables is not None else {}


class LayerState:
    """What one layer keeps between the calls of a compiled model, in ``values``, changed only
    under ``lock`` (calls may come from several threads). The plan makes one per layer whose
    spec says ``keeps_state`` each time it compiles a model, so every compiled model (and every
    compiled body) starts afresh and its infer requests share it, as OpenVINO's CPU plugin
    shares a node's state between the requests of one compiled model."""

    def __init__(self):
        self.lock = threading.Lock()
        self.values: dict[str, object] = {}
