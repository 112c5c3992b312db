"""No runaway (issue "Round three", item 4): layers whose work used to grow with an attribute
rather than with the data end in a clean result, and a long kernel stops at a signal.

Each case runs ``python -m irexec run`` in a subprocess with a generous guard against hanging
(``GUARD`` seconds: a run that passes it is a failure, not a slow pass; no test asserts a time)
and checks the outputs against a reference written here. The times measured on the machine of
the change are in docs/robustness.md ("Runaways").
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from irexec.builder import ModelBuilder
from irexec.io.ir_writer import write_ir
from tests.ops.compute_support import assert_close

ROOT = Path(__file__).resolve().parents[1]
GUARD = 60  # seconds a case may take before it counts as a runaway
STOP_GUARD = 20  # seconds `irexec run` may take to stop after a signal (measured: about 0.25)


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IREXEC_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def run_model(tmp_path: Path, build, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """Build a one-output model with ``build(ModelBuilder)``, run it on ``inputs`` through the
    command line within GUARD seconds, and return its output."""
    b = ModelBuilder()
    build(b)
    xml = tmp_path / "model.xml"
    write_ir(b.build(), xml)
    args = [sys.executable, "-m", "irexec", "run", str(xml), "-o", str(tmp_path / "out.npz")]
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
        args += ["--input", f"{name}={tmp_path / (name + '.npy')}"]
    proc = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=GUARD)
    assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "out.npz") as archive:
        (name,) = archive.files
        return archive[name]


# --- Einsum: contracted pairwise, in a good order ---------------------------------------------

def test_einsum_chain_of_four_contracts_pairwise(tmp_path):
    """ij,jk,kl,lm->im on four 300x300 operands: 300**5 terms in one pass (18 minutes); a
    chain of three matrix products in a good order."""
    rng = np.random.default_rng(0)
    arrays = {n: rng.standard_normal((300, 300)).astype(np.float32) for n in "abcd"}

    def build(b):
        ports = [b.parameter(n, "f32", [300, 300]) for n in arrays]
        b.result(b.op("Einsum", *ports, version="opset7", equation="ij,jk,kl,lm->im"), "out")
    out = run_model(tmp_path, build, arrays)
    wide = [arrays[n].astype(np.float64) for n in "abcd"]
    want = np.linalg.multi_dot(wide)
    magnitude = np.linalg.multi_dot([np.abs(a) for a in wide])
    assert_close(out, want.astype(np.float32), magnitude, "ij,jk,kl,lm->im")


# --- LRN: the window bounded by the axis -------------------------------------------------------

def lrn_reference(x, axes, size, alpha, beta, bias):
    """Each element's window sum of squares by a plain loop over the window's box."""
    x64 = x.astype(np.float64)
    half = (size - 1) // 2
    sq = x64 * x64
    sums = np.empty_like(sq)
    for index in np.ndindex(x.shape):
        box = tuple(slice(max(0, i - half), i + half + 1) if a in axes else slice(i, i + 1)
                    for a, i in enumerate(index))
        sums[index] = sq[box].sum()
    return x64 / (bias + alpha / size ** len(axes) * sums) ** beta, sums


@pytest.mark.parametrize("size, shape", [(2 ** 40, (1, 3, 5, 5)), (41, (1, 2, 3, 70))])
def test_lrn_with_a_huge_or_wide_window(tmp_path, size, shape):
    """size 2**40 looped 2**39 times over shifted slices (each empty past the axis); a window
    of 41 on an axis of 70 takes the doubling path."""
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    axes = [1, 2, 3] if size > 100 else [3]

    def build(b):
        b.result(b.op("LRN", b.parameter("x", "f32", list(shape)),
                      b.constant(np.array(axes, np.int64)), version="opset1", alpha=1e-2,
                      beta=0.75, bias=1.0, size=size), "out")
    out = run_model(tmp_path, build, {"x": x})
    want, sums = lrn_reference(x, axes, size, 1e-2, 0.75, 1.0)
    assert_close(out, want.astype(np.float32), np.abs(x) * (1 + sums), f"LRN size {size}")


# --- Col2Im: loops bounded by the blocks ---------------------------------------------------------

def col2im_loops(x, size, kernel):
    """[C * KH * KW, L] blocks (stride, dilation 1, no pads) added pixel by pixel."""
    kh, kw = kernel
    rows, cols = size[0] - kh + 1, size[1] - kw + 1
    c = x.shape[0] // (kh * kw)
    out = np.zeros((c, *size), np.float64)
    blocks = x.reshape(c, kh, kw, rows, cols).astype(np.float64)
    for i in range(rows):
        for j in range(cols):
            out[:, i:i + kh, j:j + kw] += blocks[:, :, :, i, j]
    return out


@pytest.mark.parametrize("data_shape, size, kernel, pads", [
    ((0, 1), (1, 1), (100000, 100000), (99999, 99999)),  # no data: 1e10 taps of nothing
    ((2 * 3000 * 3, 4), (3001, 4), (3000, 3), (0, 0)),  # a 3000x3 kernel over 2x2 blocks
])
def test_col2im_with_a_huge_kernel(tmp_path, data_shape, size, kernel, pads):
    x = np.random.default_rng(2).standard_normal(data_shape).astype(np.float32)

    def build(b):
        b.result(b.op("Col2Im", b.parameter("x", "f32", list(data_shape)),
                      b.constant(np.array(size, np.int64)),
                      b.constant(np.array(kernel, np.int64)), version="opset15",
                      pads_end=pads), "out")
    out = run_model(tmp_path, build, {"x": x})
    channels = data_shape[0] // (kernel[0] * kernel[1])
    assert out.shape == (channels, *size)
    if out.size:
        want = col2im_loops(x, size, kernel)
        assert_close(out, want.astype(np.float32), col2im_loops(np.abs(x), size, kernel),
                     "Col2Im")


def test_transposed_convolution_with_a_huge_kernel(tmp_path):
    """ConvolutionBackpropData scattered its columns back one kernel tap at a time: a [1, 4e6]
    kernel over 2 input positions was 4e6 numpy calls; now 2 (windows.add_taps)."""
    k = 4_000_000
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 1, 1, 2)).astype(np.float32)
    w = rng.standard_normal((1, 1, 1, k)).astype(np.float32)

    def build(b):
        b.result(b.op("ConvolutionBackpropData", b.parameter("x", "f32", [1, 1, 1, 2]),
                      b.parameter("w", "f32", [1, 1, 1, k]), version="opset1",
                      strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], dilations=[1, 1]),
                 "out")
    out = run_model(tmp_path, build, {"x": x, "w": w})
    w64, x64 = w[0, 0, 0].astype(np.float64), x[0, 0, 0].astype(np.float64)
    want = np.zeros(k + 1)
    want[:k] += x64[0] * w64
    want[1:] += x64[1] * w64
    magnitude = np.zeros(k + 1)
    magnitude[:k] += abs(x64[0] * w64)
    magnitude[1:] += abs(x64[1] * w64)
    assert_close(out[0, 0, 0], want.astype(np.float32), magnitude, "ConvolutionBackpropData")


def test_depthwise_convolution_with_a_huge_kernel(tmp_path):
    """GroupConvolution with one input channel per group took its depthwise path, a few
    numpy passes per tap: a [1, 4e6] kernel over two outputs took 43 s and 690 MB; such a
    kernel now takes one row of columns and one product."""
    k = 4_000_000
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 1, k + 1)).astype(np.float32)
    w = rng.standard_normal((2, 1, 1, 1, k)).astype(np.float32)

    def build(b):
        b.result(b.op("GroupConvolution", b.parameter("x", "f32", list(x.shape)),
                      b.parameter("w", "f32", list(w.shape)), version="opset1",
                      strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], dilations=[1, 1]),
                 "out")
    out = run_model(tmp_path, build, {"x": x, "w": w})
    x64, w64 = x[0, :, 0].astype(np.float64), w[:, 0, 0, 0].astype(np.float64)
    want = np.array([[x64[c, j:j + k] @ w64[c] for j in range(2)] for c in range(2)])
    magnitude = np.array([[np.abs(x64[c, j:j + k]) @ np.abs(w64[c]) for j in range(2)]
                          for c in range(2)])
    assert_close(out[0, :, 0], want.astype(np.float32), magnitude, "GroupConvolution")


# --- pooling: wide windows by doubling runs ------------------------------------------------------

@pytest.mark.parametrize("op", ["AvgPool", "MaxPool", "MaxPool-8"])
@pytest.mark.parametrize("width", [4_000_000, 4_000_100])
def test_pooling_with_a_kernel_of_four_million(tmp_path, op, width):
    """A [1, 4e6] window: 4e6 numpy calls, one per tap (AvgPool 17 s; MaxPool-8's indices
    took about 55 s per million taps); 1 or 101 windows."""
    k = 4_000_000
    x = np.random.default_rng(3).standard_normal((1, 2, 1, width)).astype(np.float32)
    attrs = dict(kernel=[1, k], strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0],
                 rounding_type="floor", auto_pad="explicit")
    if op == "AvgPool":
        attrs["exclude-pad"] = False
    version = "opset8" if op == "MaxPool-8" else "opset1"
    if version == "opset8":
        attrs["dilations"] = [1, 1]
    n = width - k + 1

    def build(b):
        outs = b.op(op.split("-")[0], b.parameter("x", "f32", list(x.shape)), version=version,
                    **attrs)
        if version == "opset8":  # the indices, flat over the whole tensor (axis 0)
            outs[1].names = ["indices"]
            b.result(outs[1], "indices")
        else:
            b.result(outs, "out")
    out = run_model(tmp_path, build, {"x": x})
    if op == "MaxPool-8":
        rows = x.astype(np.float64)[0, :, 0]
        want = np.stack([[c * width + i + int(np.argmax(row[i:i + k])) for i in range(n)]
                         for c, row in enumerate(rows)])
        assert np.array_equal(out[0, :, 0], want)
        return
    assert out.shape == (1, 2, 1, n)
    x64 = x.astype(np.float64)[0, :, 0]
    if op == "MaxPool":
        want = np.stack([[row[i:i + k].max() for i in range(n)] for row in x64])
        assert np.array_equal(out[0, :, 0], want.astype(np.float32))
    else:
        prefix = np.concatenate([np.zeros((2, 1)), np.cumsum(x64, axis=1)], axis=1)
        want = (prefix[:, k:] - prefix[:, :n]) / k
        assert_close(out[0, :, 0], want.astype(np.float32), 2 * np.abs(x64).sum(1)[:, None] / k,
                     op)


# --- a signal stops a long kernel ----------------------------------------------------------------

def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 128 + signal.SIGTERM),
                                       (signal.SIGINT, 130)])
def test_a_signal_stops_a_long_kernel_and_leaves_no_output(tmp_path, sig, code):
    """An Einsum that is one numpy call of about a minute (ai,bi,ci->abc: numpy finds no
    pairwise order within the memory of its operands). The signal used to wait for the call
    to return; now the command stops at once, exit 130 or 143, and no output file (nor any
    temporary) is left."""
    b = ModelBuilder()
    ports = [b.parameter(n, "f32", [128, 20000]) for n in "xyz"]
    b.result(b.op("Einsum", *ports, version="opset7", equation="ai,bi,ci->abc"), "out")
    xml = tmp_path / "model.xml"
    write_ir(b.build(), xml)
    out = tmp_path / "out.npz"
    # (a shell that starts background jobs without job control hands them SIGINT ignored,
    # which an exec keeps: the child gets the default, as a terminal's command has)
    proc = subprocess.Popen([sys.executable, "-m", "irexec", "run", str(xml), "-o", str(out)],
                            env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # Inside the kernel once the process has used 3 s of CPU (reading, compiling and
        # making the inputs take about 1 s); without /proc, after a while.
        deadline = time.monotonic() + GUARD
        while time.monotonic() < deadline and proc.poll() is None:
            used = _cpu_seconds(proc.pid)
            if used is None:
                time.sleep(5)
                break
            if used >= 3:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=STOP_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.bin", "model.xml"]


def test_a_cancelled_thread_writes_nothing(tmp_path):
    """After a signal the command line abandons its worker (cli/interruptible.py) and cancels
    its writes: the worker may still finish its kernel, but creates and renames no file."""
    import threading

    from irexec.io import safe_write

    seen = []

    def work():
        safe_write.cancel(threading.current_thread())
        try:
            safe_write.write_bytes(tmp_path / "out.bin", b"late")
        except safe_write.Cancelled as e:
            seen.append(e)
    worker = threading.Thread(target=work)
    worker.start()
    worker.join(GUARD)
    assert len(seen) == 1 and list(tmp_path.iterdir()) == []
    safe_write.write_bytes(tmp_path / "out.bin", b"main")  # other threads write as before
    assert (tmp_path / "out.bin").read_bytes() == b"main"
