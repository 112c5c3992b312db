"""The variables of a stateful model (ReadValue/Assign) for the call being run: a dict of
variable id -> array, owned by the infer request, set for the duration of each call. And
``LayerState``: what one layer keeps between the calls of its compiled model.

A call reads the values the previous calls left (``current``) and its writes (``assign``) take
effect when it ends well: in whatever order the layers run (an Assign listed before the
ReadValue of its variable, with no path between them), a ReadValue gives the last call's value,
as OpenVINO does; a call that fails leaves the variables as they were."""

from __future__ import annotations

import contextvars
import threading

import numpy as np

from irexec import forksafe

_CURRENT: contextvars.ContextVar[dict[str, np.ndarray] | None] = \
    contextvars.ContextVar("irexec_variables", default=None)


_WRITTEN: contextvars.ContextVar[dict[str, np.ndarray] | None] = \
    contextvars.ContextVar("irexec_variables_written", default=None)


class using:
    """``with using(variables):`` the layers of the call in progress read ``variables`` and
    write into them when the call ends without an error (a class, not a generator: every call
    of a compiled model enters it)."""

    def __init__(self, variables: dict[str, np.ndarray]):
        self.variables = variables

    def __enter__(self):
        self.written: dict[str, np.ndarray] = {}
        self.tokens = _CURRENT.set(self.variables), _WRITTEN.set(self.written)
        return self.variables

    def __exit__(self, kind, *exc):
        _CURRENT.reset(self.tokens[0])
        _WRITTEN.reset(self.tokens[1])
        if kind is None:
            self.variables.update(self.written)


def current() -> dict[str, np.ndarray]:
    """The variables as the previous calls left them."""
    variables = _CURRENT.get()
    return variables if variables is not None else {}


def assign(variable_id: str, value: np.ndarray) -> None:
    """Set a variable for the next call (outside a call: at once)."""
    written = _WRITTEN.get()
    (written if written is not None else current())[variable_id] = value


class LayerState:
    """What one layer keeps between the calls of a compiled model, in ``values``, changed only
    under ``lock`` (calls may come from several threads). The plan makes one per layer whose
    spec says ``keeps_state`` each time it compiles a model, so every compiled model (and every
    compiled body) starts afresh and its infer requests share it, as OpenVINO's CPU plugin
    shares a node's state between the requests of one compiled model."""

    def __init__(self):
        self.lock = threading.Lock()
        forksafe.renew(self, "lock")
        self.values: dict[str, object] = {}
