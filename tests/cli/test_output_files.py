"""No command overwrites what it reads, leaves a temporary file behind, or replaces a pipe, a
device or a file's permissions (issue 14, items 1 to 4)."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.cli.conftest import SAMPLES, one_error, run_cli
from tests.cli.inproc import irexec_cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def work(tmp_path):
    for ext in (".xml", ".bin"):
        shutil.copy(SAMPLES / f"convert_reverse_chain{ext}", tmp_path / f"m{ext}")
    return tmp_path


def snapshot(folder: Path) -> dict:
    """Every entry under ``folder``: its kind, bytes and modification time."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        data = p.read_bytes() if stat.S_ISREG(st.st_mode) else None
        out[str(p.relative_to(folder))] = (stat.S_IFMT(st.st_mode), data, st.st_mtime_ns)
    return out


# --- item 1: no command writes over its inputs --------------------------------------------------

COMMANDS = {
    "validate -o M.xml": ["validate", "{m}", "-o", "{m}"],
    "validate -o M.bin": ["validate", "{m}", "-o", "{bin}"],
    "validate -o via ..": ["validate", "{m}", "-o", "{work}/sub/../m.xml"],
    "graph -o M.xml -f mermaid": ["graph", "{m}", "-o", "{m}", "-f", "mermaid"],
    "graph -o M.bin -f dot": ["graph", "{m}", "-o", "{bin}", "-f", "dot"],
    "graph -o a symlink to M.xml": ["graph", "{m}", "-o", "{work}/link.dot"],
    "run -o M.xml": ["run", "{m}", "-o", "{m}"],
    "run -o a hard link to M.bin": ["run", "{m}", "-o", "{work}/hard.npz"],
    "run --input-dir D --output-dir D": ["run", "{m}", "--input-dir", "{work}/in",
                                         "--output-dir", "{work}/in/../in"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_no_command_writes_over_its_inputs(work, name):
    (work / "sub").mkdir()
    (work / "in").mkdir()
    np.savez(work / "in" / "a.npz", data=np.zeros((5, 4, 3), np.int32))
    os.symlink(work / "m.xml", work / "link.dot")
    os.link(work / "m.bin", work / "hard.npz")
    before = snapshot(work)
    args = [a.format(m=work / "m.xml", bin=work / "m.bin", work=work) for a in COMMANDS[name]]
    status, out, err = irexec_cli(*args)
    assert status == 2, (status, out, err)
    assert len(err.splitlines()) == 1 and "irexec never writes over its inputs" in err \
        or "is the --input-dir" in err, err
    assert snapshot(work) == before


def test_convert_never_writes_its_bin_over_the_onnx_model(tmp_path):
    onnx = pytest.importorskip("onnx")
    from tests.onnx.models import reverse_sequence_model

    src = tmp_path / "model.bin"  # an ONNX model whose name the output's .bin would take
    onnx.save(reverse_sequence_model([3, 2], onnx.TensorProto.FLOAT), src)
    before = snapshot(tmp_path)
    status, _, err = irexec_cli("convert", src, "-o", tmp_path / "model.xml")
    assert status == 2 and "is the model" in err, err
    assert snapshot(tmp_path) == before


def test_a_symlinked_output_keeps_its_link(work):
    real = work / "real.npz"
    real.write_bytes(b"old")
    os.symlink(real, work / "link.npz")
    status, _, err = irexec_cli("run", work / "m.xml", "-o", work / "link.npz")
    assert status == 0, err
    assert (work / "link.npz").is_symlink() and os.readlink(work / "link.npz") == str(real)
    with np.load(real) as saved:
        assert set(saved.files) == {"reversed_sequences", "flipped"}


def test_trace_never_writes_over_an_input_in_its_folder(work, edited):
    """A layer named like an input file in the trace folder (item 2b): the input survives, the
    trace file gets another name, and the index says which."""
    model = edited({'name="seq_lengths" type="Parameter"': 'name="rs" type="Parameter"'})
    trace = work / "trace"
    trace.mkdir()
    lengths = trace / "rs.npy"
    np.save(lengths, np.array([5, 1, 3, 2], np.int64))
    keep = trace / "data.npy"  # not an input, but not the trace's either
    keep.write_bytes(b"a file of the user's")
    before = lengths.read_bytes()
    status, _, err = irexec_cli("run", model, "--input", f"rs={lengths}", "--trace", trace)
    assert status == 0, err
    assert lengths.read_bytes() == before and keep.read_bytes() == b"a file of the user's"
    from irexec.runtime.trace import load_trace

    traced = load_trace(trace)
    np.testing.assert_array_equal(traced[("rs", 0)], np.load(lengths))
    import json

    files = {e["layer"]: e["file"] for e in json.loads((trace / "index.json").read_text())
             ["layers"]}
    assert files["rs"] != "rs.npy" and files["data"] != "data.npy"
    assert not [p for p in trace.iterdir() if p.name.startswith(".irexec-")]


def test_trace_run_again_replaces_its_own_files(work):
    trace = work / "trace"
    for _ in range(2):
        status, _, err = irexec_cli("run", work / "m.xml", "--trace", trace)
        assert status == 0, err
    assert sorted(p.name for p in trace.iterdir()) == sorted(
        ["data.npy", "seq_lengths.npy", "to_f32.npy", "reversed_sequences.npy", "flipped.npy",
         "index.json"])


def test_trace_refuses_a_folder_whose_index_json_is_not_a_trace(work):
    trace = work / "trace"
    trace.mkdir()
    (trace / "index.json").write_text('{"my": "settings"}')
    m = one_error(run_cli("run", work / "m.xml", "--trace", trace))
    assert "not the index of an irexec trace" in m["message"]
    assert (trace / "index.json").read_text() == '{"my": "settings"}'


@pytest.mark.parametrize("name,stem", [
    ("CON", "_CON"), ("nul.0", "_nul.0"), ("com1", "_com1"), ("lpt9.x", "_lpt9.x"),
    ("a/b:c", "a_b_c"), ("...", "layer"), (".hidden.", "hidden"), ("x" * 300, "x" * 100),
    ("console", "console"),
])
def test_trace_file_names_are_safe_on_every_file_system(name, stem):
    from irexec.runtime.trace import file_stem

    assert file_stem(name) == stem


# --- item 2: no temporary file survives a signal -----------------------------------------------

SCRIPT = """
import os, signal, sys
sys.path.insert(0, {root!r})
# A shell without job control starts background commands with SIGINT ignored, which Python
# then keeps: give the command the handler an interactive Ctrl-C meets.
signal.signal(signal.SIGINT, signal.default_int_handler)
real = os.{patched}
def patched(path, *args, **kwargs):
    result = real(path, *args, **kwargs)
    if ".irexec-" in os.fspath(path):
        os.kill(os.getpid(), signal.{signal})
    return result
os.{patched} = patched
from irexec.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig,code", [("SIGINT", 130), ("SIGTERM", 128 + signal.SIGTERM),
                                      ("SIGHUP", 128 + signal.SIGHUP)])
@pytest.mark.parametrize("moment", ["open", "chmod"])
def test_a_signal_while_writing_leaves_no_temporary(work, sig, code, moment):
    """The signal arrives right after the temporary file is created, or once its bytes are
    written, just before it is renamed: either way nothing is left but the inputs."""
    (work / "in").mkdir()
    for i in range(3):
        np.savez(work / "in" / f"c{i}.npz", data=np.zeros((5, 4, 3), np.int32))
    before = snapshot(work)
    script = SCRIPT.format(root=str(ROOT), patched=moment, signal=sig)
    proc = subprocess.run([sys.executable, "-c", script, "run", str(work / "m.xml"),
                           "--input-dir", str(work / "in"), "--output-dir", str(work / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    after = snapshot(work)
    assert {k: v for k, v in after.items() if k != "out"} == before
    assert not [p for p in work.rglob("*") if p.name.startswith(".irexec-")]


def test_random_interrupts_of_a_batch_leave_no_temporary(work):
    """Ctrl-C at arbitrary moments of a batch that writes 40 outputs (the issue saw 0-byte
    temporaries after 5 of 15): no run may leave one."""
    (work / "in").mkdir()
    for i in range(40):
        np.savez(work / "in" / f"c{i:02d}.npz", data=np.zeros((5, 4, 3), np.int32))
    rng = np.random.default_rng(0)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for attempt in range(6):
        out = work / f"out{attempt}"
        proc = subprocess.Popen([sys.executable, "-m", "irexec", "run", str(work / "m.xml"),
                                 "--input-dir", str(work / "in"), "--output-dir", str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        # Wait until outputs start to appear, then interrupt at a random moment.
        deadline = time.monotonic() + 60
        while not (out.exists() and any(out.iterdir())) and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(float(rng.uniform(0, 0.05)))
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        left = [p.name for p in out.iterdir() if p.name.startswith(".irexec-")] \
            if out.exists() else []
        assert left == [], (attempt, left)


# --- item 2c: pipes, devices and permissions ---------------------------------------------------

def test_output_into_a_fifo_writes_into_it(work):
    fifo = work / "pipe.npz"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    proc = run_cli("run", work / "m.xml", "-o", fifo)
    reader.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still a pipe, not replaced by a file
    assert received and received[0].startswith(b"PK")  # the .npz archive came through it
    assert not [p for p in work.iterdir() if p.name.startswith(".irexec-")]


@pytest.mark.parametrize("command", [["run", "{m}", "-o", "/dev/null"],
                                     ["graph", "{m}", "-o", "/dev/null", "-f", "dot"],
                                     ["validate", "{m}", "-o", "/dev/null"]])
def test_output_to_a_character_device_writes_into_it(work, command):
    before = os.stat("/dev/null")
    status, _, err = irexec_cli(*[a.format(m=work / "m.xml") for a in command])
    assert status == 0, err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == \
        (before.st_ino, before.st_rdev)


@pytest.mark.parametrize("command", [["run", "{m}", "-o", "{out}.npz"],
                                     ["graph", "{m}", "-o", "{out}.dot"],
                                     ["validate", "{m}", "-o", "{out}.txt"]])
def test_an_existing_output_keeps_its_permissions(work, command):
    args = [a.format(m=work / "m.xml", out=work / "out") for a in command]
    target = Path(args[3])
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    status, _, err = irexec_cli(*args)
    assert status == 0, err
    assert target.read_bytes() != b"old"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_read_only_output_is_not_replaced(work):
    target = work / "out.npz"
    target.write_bytes(b"old")
    os.chmod(target, 0o444)
    m = one_error(run_cli("run", work / "m.xml", "-o", target))
    assert "Permission denied" in m["message"]
    assert target.read_bytes() == b"old"


# --- item 4: the suffix says what is written; a folder is not a file ---------------------------

def test_output_named_npy_is_refused(work):
    proc = run_cli("run", work / "m.xml", "-o", work / "out.npy")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "give a name ending in .npz" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not (work / "out.npy").exists()


@pytest.mark.parametrize("command", [["run", "{m}", "-o", "{d}/"],
                                     ["graph", "{m}", "-o", "{d}", "-f", "dot"],
                                     ["validate", "{m}", "-o", "{d}"]])
def test_output_onto_a_folder_says_it_is_a_folder(work, command):
    (work / "adir").mkdir()
    args = [a.format(m=work / "m.xml", d=work / "adir") for a in command]
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert "is a folder, not a file" in proc.stderr and "Not a directory" not in proc.stderr
    assert not any((work / "adir").iterdir())
