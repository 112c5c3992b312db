"""Messages for common mistakes say what is wrong in one line, in the user's terms (issue 14,
item 7)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tests.cli.conftest import SAMPLES, one_error, run_cli
from tests.cli.inproc import irexec_cli

CHAIN = SAMPLES / "convert_reverse_chain.xml"
NARROW = SAMPLES / "narrow_types.xml"


@pytest.mark.parametrize("seed", ["-1", "abc", str(2**64 - 1), "2**64-1", str(2**63), "1.5"])
def test_a_bad_seed_says_the_allowed_range(seed):
    proc = run_cli("run", CHAIN, f"--seed={seed}")
    assert proc.returncode == 2 and proc.stdout == ""
    last = proc.stderr.splitlines()[-1]
    assert last == (f"irexec run: error: argument --seed: '{seed}' is not a seed; give a whole "
                    f"number from 0 to {2**63 - 1} (2**63-1)")
    assert "_seed" not in proc.stderr and "invalid" not in proc.stderr


@pytest.mark.parametrize("seed", ["0", str(2**63 - 1)])
def test_the_ends_of_the_seed_range_run(seed):
    proc = run_cli("run", CHAIN, "--seed", seed)
    assert proc.returncode == 0, proc.stderr


def test_a_tiny_memory_budget_is_one_line_with_the_right_sizes():
    proc = run_cli("run", CHAIN, "--memory-budget", "10")
    m = one_error(proc)
    # data is i32 [5,4,3]: 240 bytes, said once, not "240 bytes (240 bytes)"
    assert m["layer"] == "data"
    assert "shape [5, 4, 3] of i32 needs 240 bytes, more than the memory budget of 10 bytes" \
        in m["message"]
    assert "(240 bytes)" not in m["message"] and "60 bytes" not in m["message"]
    # the other output ports over 10 bytes: seq_lengths (32), to_f32, reversed_sequences,
    # flipped (240 each); the Const (8 bytes) and the input ports are not counted
    assert "(4 more tensors of this model are over it too: 'seq_lengths', 'to_f32', " \
           "'reversed_sequences', ...)" in m["message"]


def test_input_ports_are_not_costed_as_tensors_of_their_own():
    """Between the size of the largest f32 tensor (240 bytes) and the i32 one's quarter (60),
    only the real tensors are over: no input port appears."""
    proc = run_cli("run", CHAIN, "--memory-budget", "100")
    m = one_error(proc)
    assert "(3 more tensors of this model are over it too: 'to_f32', 'reversed_sequences', " \
           "'flipped')" in m["message"]


def test_weights_that_are_the_xml_are_named_as_such(tmp_path):
    m = one_error(run_cli("run", CHAIN, "--weights", CHAIN))
    assert m["message"] == (f"the weights file '{CHAIN}' is an XML file, not a .bin of "
                            f"weights; give the model's .bin (--weights)")
    assert "out of range" not in m.string


def test_weights_that_are_text_are_named_as_such(tmp_path):
    text = tmp_path / "notes.bin"
    text.write_text("These are my notes about the model.\nThey are not weights at all.\n" * 3)
    m = one_error(run_cli("run", NARROW, "--weights", text))
    assert "is a text file, not a .bin of weights" in m["message"]


def test_weights_too_small_for_every_const_is_one_line(tmp_path):
    small = tmp_path / "small.bin"
    small.write_bytes(b"\x01\x02\x03")
    m = one_error(run_cli("run", NARROW, "--weights", small))
    assert m["message"] == (f"the weights file '{small}' holds 3 bytes, but 3 Consts lie beyond "
                            f"its end ('weights', 'nf4_codes', 'axes'; they need 32 bytes): it "
                            f"is cut short, or not this model's .bin")


def test_one_const_past_the_end_is_still_that_consts_problem(tmp_path):
    for ext in (".xml", ".bin"):
        shutil.copy(SAMPLES / f"narrow_types{ext}", tmp_path / f"m{ext}")
    data = (tmp_path / "m.bin").read_bytes()
    (tmp_path / "m.bin").write_bytes(data[:28])  # 'axes' (offset 24, size 8) is cut
    m = one_error(run_cli("run", tmp_path / "m.xml"))
    assert m["layer"] == "axes" and "lies beyond the end of the weights file (28 bytes)" \
        in m["message"]


def test_a_weights_file_with_binary_numbers_is_not_taken_for_text():
    from irexec.io.weights import HEAD_BYTES, not_weights

    numbers = np.arange(HEAD_BYTES // 4, dtype=np.float32).tobytes()
    assert not_weights(numbers) is None
    assert not_weights(b"A" * HEAD_BYTES) is None  # printable, but no words and lines
