"""The variables of a stateful model (ReadValue/Assign) for the call being run: a dict of
variable id -> array, owned by the infer request, set for the duration of each call."""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

_CURRENT: contextvars.ContextVar[dict[str, np.ndarray] | None] = \
    contextvars.ContextVar("irexec_variables", default=None)


@contextlib.contextmanager
def using(variables: dict[str, np.ndarray]):
    token = _CURRENT.set(variables)
    try:
        yield variables
    finally:
        _CURRENT.reset(token)


def current() -> dict[str, np.ndarray]:
    variables = _CURRENT.get()
    return variables if variables is not None else {}
