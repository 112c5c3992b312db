"""A pool of worker processes that loses nothing when one dies.

Each worker is a fresh interpreter (``python -m irexec.batch.worker FD``: nothing of the parent's
threads or BLAS pools is inherited, and unlike multiprocessing's "spawn" the caller's main script
is not imported again) started with the BLAS and OpenMP thread variables set to its share of the
cores, so N workers never start N pools as wide as the machine. It talks to the parent over a
socket pair; the parent sees a worker's death as the end of its socket. It receives the job once,
compiles the model once, then takes samples one by one from its own pipe and sends back each
outcome. The parent keeps ``PREFETCH`` samples queued per worker (so a worker never waits for the
next), and knows which samples each worker holds: when a worker dies (SIGKILL, the OOM killer, a
crash in a library) those samples go back to the queue and a new worker takes its place. A
sample that was on ``MAX_DEATHS`` dying workers is reported as failed instead of killing more.

NOTE for developers: ``concurrent.futures.ProcessPoolExecutor`` fails every pending future when
one worker dies (BrokenProcessPool) and ``multiprocessing.Pool`` never returns the task a dead
worker held; hence this small loop over pipes and process sentinels.
"""

from __future__ import annotations

import collections
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection, wait

from irexec.batch.work import Job, Outcome, blas_environment, cores, run_sample
from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError

PREFETCH = 2
MAX_DEATHS = 3


def _worker_main(conn, payload: bytes) -> None:
    """A worker: the job, then (index, sample) messages until None; one reply per sample.

    A thread reads the socket all the time, so the parent's send of a large sample never waits
    for this worker to finish sending a large result (each side would wait for the other)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        job: Job = pickle.loads(payload)
        job.compiled()  # read and compile once, before the first sample
    except IRError as e:
        conn.send(("fatal", list(e.diagnostics)))
        return
    inbox: queue.SimpleQueue = queue.SimpleQueue()

    def read():
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                message = None
            inbox.put(message)
            if message is None:
                return

    threading.Thread(target=read, name="irexec-worker-inbox", daemon=True).start()
    conn.send(("ready", os.getpid()))
    while True:
        message = inbox.get()
        if message is None:
            return
        index, sample = message
        conn.send((index, run_sample(job, sample)))


def main(argv=None) -> None:
    """``python -m irexec.batch.worker FD``: a worker on the socket ``FD``; the job comes first."""
    fd = int((argv or sys.argv)[1])
    conn = Connection(fd)
    try:
        payload = conn.recv_bytes()
    except EOFError:
        return
    _worker_main(conn, payload)


def _package_root() -> str:
    """The folder holding the irexec package, for the worker's import path."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Worker:
    def __init__(self, payload: bytes, threads: int):
        ours, theirs = socket.socketpair()
        env = {**os.environ, **blas_environment(threads)}
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_package_root(), os.environ.get("PYTHONPATH")) if p)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "irexec.batch.worker", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL,
                start_new_session=False)
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.payload = payload  # sent by ``send_job``, once every worker has been started
        self.held: collections.deque[int] = collections.deque()
        self.ready = False
        self.pid = self.process.pid

    def send_job(self) -> None:
        """Send the job (a worker reads it once its interpreter is up: started first, the
        workers start side by side, even when the job is large)."""
        if self.payload is not None:
            self.conn.send_bytes(self.payload)
            self.payload = None

    def alive(self) -> bool:
        return self.process.poll() is None

    @property
    def exitcode(self):
        return self.process.poll()

    def stop(self, kill: bool = False) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.conn.close()


class Pool:
    """``Pool(job, jobs).imap(samples)`` yields (index, Outcome) as samples finish."""

    def __init__(self, job: Job, jobs: int):
        self.jobs = max(1, jobs)
        self.threads = max(1, cores() // self.jobs)
        self._payload = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        self.workers: list[_Worker] = []
        self.replaced = 0  # workers that died and were replaced

    def pids(self) -> list[int]:
        """The process ids of the live workers (for tests that kill one)."""
        return [w.pid for w in self.workers if w.ready]

    def busy_pids(self) -> list[int]:
        """The process ids of the workers holding samples now."""
        return [w.pid for w in self.workers if w.ready and w.held]

    def _start(self) -> _Worker:
        worker = _Worker(self._payload, self.threads)
        self.workers.append(worker)
        return worker

    def imap(self, samples: list):
        todo = collections.deque(range(len(samples)))
        deaths = collections.Counter()
        for _ in range(min(self.jobs, len(samples))):
            self._start()
        for worker in self.workers:
            worker.send_job()
        remaining = len(samples)
        try:
            while remaining:
                for w in list(self.workers):
                    try:
                        while w.ready and todo and len(w.held) < PREFETCH:
                            index = todo.popleft()
                            w.held.append(index)
                            w.conn.send((index, samples[index]))
                    except OSError:  # it died since: its samples go back, a new one comes
                        for index, outcome in self._bury(w, todo, deaths):
                            remaining -= 1
                            yield index, outcome
                waitables = {w.conn: w for w in self.workers}
                for ready in wait(list(waitables)):
                    worker = waitables[ready]
                    if worker not in self.workers:
                        continue
                    message, dead = self._receive(worker)
                    if message is not None and message[0] == "fatal":
                        raise IRError(message[1])
                    if message is not None and message[0] == "ready":
                        worker.ready = True
                    elif message is not None:
                        index, outcome = message
                        worker.held.remove(index)
                        remaining -= 1
                        yield index, outcome
                    if dead:
                        for index, outcome in self._bury(worker, todo, deaths):
                            remaining -= 1
                            yield index, outcome
        finally:
            self.close(kill=True)

    @staticmethod
    def _receive(worker: _Worker):
        """(message or None, whether the worker is gone: its end of the socket closed)."""
        try:
            return worker.conn.recv(), False
        except (EOFError, OSError):
            return None, True

    def _bury(self, worker: _Worker, todo, deaths):
        """A worker died: what it finished is kept, what it held goes back to the queue (or,
        after MAX_DEATHS, fails), and a new worker takes its place."""
        finished = []  # a socket's replies all come before its end: nothing is left unread
        self.workers.remove(worker)
        worker.stop(kill=True)
        code = worker.exitcode
        for index in reversed(worker.held):
            deaths[index] += 1
            if deaths[index] >= MAX_DEATHS:
                how = f"signal {-code}" if code is not None and code < 0 else f"exit {code}"
                error = IRError.make("IR001", f"the worker running this sample died "
                                              f"{MAX_DEATHS} times (last by {how})",
                                     Location(None))
                finished.append((index, Outcome(errors=list(error.diagnostics))))
            else:
                todo.appendleft(index)
        if not worker.ready and code not in (None, 0):
            deaths[-1] += 1  # a worker that dies before it is ready: never loop for ever
            if deaths[-1] >= MAX_DEATHS:
                raise IRError.make("IR001", f"irexec's worker processes die as they start "
                                            f"(exit {code}); run with --jobs 1 to see why")
        self.replaced += 1
        if todo:
            self._start().send_job()
        return finished

    def close(self, kill: bool = False) -> None:
        for w in self.workers:
            w.stop(kill=kill)
        self.workers = []

