"""A forked child never inherits a lock held by another thread of its parent (irexec/forksafe.py):
the dataset pool forks workers from a process that may run other threads, whose held locks
would otherwise hang the child at its first use of them."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import irexec
from irexec import budget
from irexec.builder import ModelBuilder
from irexec.kernels import blas, half, scratch

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform has no fork")

GUARD = 60  # seconds: a child that has not finished by then hangs


def _model():
    b = ModelBuilder()
    x = b.parameter("x", "f32", [4, 8])
    w = b.constant(np.arange(64, dtype=np.float32).reshape(8, 8) / 64)
    b.result(b.op("Relu", b.op("MatMul", x, w)), "y")
    return irexec.compile_model(b.build())


def _child_status(pid: int) -> int:
    deadline = time.monotonic() + GUARD
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return -9


def test_locks_held_by_another_thread_at_the_fork_are_free_in_the_child():
    compiled = _model()
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    want = compiled({"x": x})[0]
    held, release = threading.Event(), threading.Event()

    def hold():
        with compiled._lock, blas._lock, half._lock, scratch._every_lock, budget._lock:
            held.set()
            release.wait(GUARD)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(GUARD)
    pid = os.fork()
    if pid == 0:  # the child: every lock free, the model runs
        code = 1
        try:
            locks = [compiled._lock, blas._lock, half._lock, scratch._every_lock, budget._lock]
            if all(lock.acquire(timeout=5) for lock in locks):
                for lock in locks:
                    lock.release()
                got = compiled({"x": x})[0]
                code = 0 if np.array_equal(got, want) else 2
        finally:
            os._exit(code)
    try:
        status = _child_status(pid)
    finally:
        release.set()
        holder.join(GUARD)
    assert status == 0  # -9: the child hung on a lock
