"""A pool of worker processes that loses nothing when one dies.

Workers start one of two ways (:func:`start_method`):

- **fork** (Linux, the default there): a copy of the irexec process, made after it has read and
  compiled the model, so a worker is ready in milliseconds with the compiled model inherited
  (its memory shared with the parent's until written) instead of a second or more spent
  starting Python, importing irexec and reading and compiling the model again. The copy holds
  its BLAS to its share of the cores at once (:func:`irexec.batch.work.limit_blas`: the thread
  variables are read only when a library starts, so they cannot act in a copy); OpenBLAS stops
  its own threads around a fork, and the parent forks from the thread that runs the job, with
  no irexec call under way in it.
- **spawn** (elsewhere; for an OpenVINO comparison, whose thread pools are not safe to fork;
  or with ``IREXEC_WORKER_START=spawn``): a fresh interpreter (``python -m irexec.batch.worker
  FD``: nothing of the parent's threads or BLAS pools is inherited, and unlike
  multiprocessing's "spawn" the caller's main script is not imported again) started with the
  BLAS and OpenMP thread variables set to its share of the cores; it receives the job and
  reads and compiles the model itself.

Either way a worker talks to the parent over a socket pair; the parent sees a worker's death as
the end of its socket. It takes samples one by one from its own socket and sends back each
outcome. The parent keeps ``PREFETCH`` samples queued per worker (so a worker never waits for
the next) while there are samples for every worker, one each at the end; and knows which
samples each worker holds: when a worker dies (SIGKILL, the OOM killer, a crash in a library)
those samples go back to the queue and a new worker takes its place. A sample that was on
``MAX_DEATHS`` dying workers is reported as failed instead of killing more.

NOTE for developers: ``concurrent.futures.ProcessPoolExecutor`` fails every pending future when
one worker dies (BrokenProcessPool) and ``multiprocessing.Pool`` never returns the task a dead
worker held; hence this small loop over pipes and process sentinels.
"""

from __future__ import annotations

import abc
import collections
import multiprocessing
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
import warnings
from multiprocessing.connection import Connection, wait

from irexec.batch.work import Job, Outcome, blas_environment, cores, limit_blas, run_sample
from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError, UsageError

PREFETCH = 2
MAX_DEATHS = 3
START_ENV = "IREXEC_WORKER_START"


def _worker_main(conn, job) -> None:
    """A worker: (index, sample) messages until None; one reply per sample. ``job``: the Job,
    or its pickle (a spawned worker unpickles it here, where a failure can be reported).

    A thread reads the socket all the time, so the parent's send of a large sample never waits
    for this worker to finish sending a large result (each side would wait for the other)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        if isinstance(job, bytes):
            job = pickle.loads(job)
        job.compiled()  # read and compile once, before the first sample (forked: inherited)
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


class _Worker(abc.ABC):
    """One worker process and the parent's end of its socket; how the process is reached (a
    spawned interpreter or a forked copy) is the subclass's."""

    conn: Connection
    pid: int

    def __init__(self):
        self.held: collections.deque[int] = collections.deque()
        self.ready = False

    def send_job(self) -> None:
        """Send what the worker needs before its first sample (nothing, once forked)."""

    def alive(self) -> bool:
        return self.exitcode is None

    @property
    @abc.abstractmethod
    def exitcode(self):
        """The process's exit code, None while it runs."""

    @abc.abstractmethod
    def _kill(self) -> None:
        """End the process at once."""

    @abc.abstractmethod
    def _wait(self, timeout: float | None) -> None:
        """Wait up to ``timeout`` seconds for the process to end."""

    def stop(self, kill: bool = False) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
            self._wait(5)
        if self.exitcode is None:
            self._kill()
        self._wait(None)
        self.conn.close()


class _SpawnedWorker(_Worker):
    """A fresh interpreter (``python -m irexec.batch.worker FD``) with the BLAS variables set
    to its share; it unpickles the job and reads and compiles the model itself."""

    def __init__(self, payload: bytes, threads: int):
        super().__init__()
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
        self.pid = self.process.pid

    def send_job(self) -> None:
        """Send the job (a worker reads it once its interpreter is up: started first, the
        workers start side by side, even when the job is large)."""
        if self.payload is not None:
            self.conn.send_bytes(self.payload)
            self.payload = None

    @property
    def exitcode(self):
        return self.process.poll()

    def _kill(self) -> None:
        self.process.kill()

    def _wait(self, timeout: float | None) -> None:
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass


def _forked_main(conn: Connection, job: Job, threads: int, inherited: list) -> None:
    """A forked worker's life: drop the parent's ends of every worker's socket (so that each
    worker sees its own end close when the parent goes), take the default action on SIGTERM and
    SIGHUP (the parent's handlers write files), hold BLAS to this worker's share, then serve."""
    for other in inherited:
        other.close()
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    limit_blas(threads)
    _worker_main(conn, job)


class _ForkedWorker(_Worker):
    """A copy of this process (``fork``), made after the model was read and compiled here: it
    starts in milliseconds with the compiled model inherited (its memory shared until written)."""

    def __init__(self, job: Job, threads: int, siblings: list[_Worker]):
        super().__init__()
        ours, theirs = socket.socketpair()
        self.conn = Connection(ours.detach())
        child = Connection(theirs.detach())
        context = multiprocessing.get_context("fork")
        self.process = context.Process(
            target=_forked_main, name="irexec-worker", daemon=True,
            args=(child, job, threads, [self.conn, *(w.conn for w in siblings)]))
        try:
            with warnings.catch_warnings():  # Python 3.12+ warns of fork with threads running
                warnings.simplefilter("ignore", DeprecationWarning)
                self.process.start()
        finally:
            child.close()
        self.pid = self.process.pid

    @property
    def exitcode(self):
        return self.process.exitcode

    def _kill(self) -> None:
        self.process.kill()

    def _wait(self, timeout: float | None) -> None:
        self.process.join(timeout)


def start_method(job: Job) -> str:
    """How workers start: ``fork`` where the system has it (Linux), unless the job runs
    OpenVINO (its thread pools are not safe to fork) or ``IREXEC_WORKER_START=spawn`` says
    otherwise; else ``spawn`` (a fresh interpreter)."""
    chosen = os.environ.get(START_ENV, "").strip().lower()
    if chosen in ("fork", "spawn"):
        return chosen if chosen == "spawn" or _can_fork() else "spawn"
    if chosen:
        raise UsageError(f"{START_ENV}={os.environ[START_ENV]!r}: workers start by 'fork' or "
                         f"'spawn'; set one of those or unset it")
    if getattr(job.comparison, "oracle", None) == "openvino":
        return "spawn"
    return "fork" if _can_fork() else "spawn"


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


class Pool:
    """``Pool(job, jobs).imap(samples)`` yields (index, Outcome) as samples finish."""

    def __init__(self, job: Job, jobs: int, start: str | None = None):
        self.jobs = max(1, jobs)
        self.threads = max(1, cores() // self.jobs)
        self.start_method = start or start_method(job)
        self.job = job
        self._payload = None
        if self.start_method == "spawn":
            if job.source.xml is not None and job.source.found_here():
                job = job.without_bytes()  # the workers read the same files, checked by digest
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
        if self.start_method == "fork":
            worker = _ForkedWorker(self.job, self.threads, self.workers)
        else:
            worker = _SpawnedWorker(self._payload, self.threads)
        self.workers.append(worker)
        return worker

    def imap(self, samples: list):
        todo = collections.deque(range(len(samples)))
        deaths = collections.Counter()
        if self.start_method == "fork":
            self.job.compiled()  # here, once, before the first fork (a no-op when remembered)
            if self.job.comparison is not None:
                self.job.comparison.prepare()
            sys.stdout.flush()
            sys.stderr.flush()
        for _ in range(min(self.jobs, len(samples))):
            self._start()
        for worker in self.workers:
            worker.send_job()
        remaining = len(samples)
        try:
            while remaining:
                for w in list(self.workers):
                    try:
                        while w.ready and todo and len(w.held) < self._depth(len(todo)):
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

    def _depth(self, left: int) -> int:
        """How many samples a worker may hold: ``PREFETCH`` while there are enough for every
        worker, then one (so the last samples go to whichever worker is free first, and no
        worker idles at the end while another still has two queued)."""
        return PREFETCH if left >= len(self.workers) else 1

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

