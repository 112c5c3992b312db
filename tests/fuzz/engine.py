"""The fuzzer's two halves, shared by tests/fuzz/test_fuzz.py (bounded, in CI) and tools/fuzz.py
(long runs): ``mutate`` breaks a valid sample model in ways an IR file can be broken, and
``run_case`` feeds the result to read_model + compile_model + one call.

The contract under test: each case either succeeds or raises ``IRError``. Any other exception, a
case running longer than ``TIME_LIMIT`` seconds, or the process's peak memory growing past
``MEMORY_BOUND`` bytes is a failure (``FuzzFailure``).

``mutate`` draws its choices from ``r``, anything with ``randint(a, b)`` and ``choice(seq)``:
``random.Random`` for plain loops, ``HypothesisRandom`` inside a hypothesis test (which can then
shrink a failing case to a small one).
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import traceback
from pathlib import Path

from lxml import etree

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CRASHES = Path(__file__).resolve().parent / "crashes"
TIME_LIMIT = 5.0
MEMORY_BOUND = 1 << 30  # peak RSS may grow this much over the whole run, no more
BUDGET = "64M"  # the memory budget the fuzzed models run under

INT_VALUES = ["", " ", "0", "1", "-1", "-2", "2", "3", "4", "7", "64", "255", "1e309", "NaN",
              "nan", "inf", "-inf", "0x10", "1.5", "+5", "010", "99999999999999999999",
              "18446744073709551616", "18446744073709551615", "9223372036854775807",
              "9223372036854775808", "-9223372036854775808", "4294967296", "2147483647",
              "1000000000", "100000"]
TEXT_VALUES = ["?", "...", "-1..5", "5..2", "..8", "3..", "1,2", "1,,2", ",", "[]", "[1,2,3]",
               "1, 2, 3", "1,?,3", "true", "false", "f32", "u1", "string", "dynamic", "undefined",
               "\u00e9", "\u202e", "a" * 5000, "1," * 200 + "1", "4,10,100,200",
               "1000000,1000000,1000000", "9223372036854775807,2", "\ufeff1"]
TYPE_NAMES = ["f32", "f16", "bf16", "f64", "i4", "i8", "i16", "i32", "i64", "u1", "u2", "u3",
              "u4", "u6", "u8", "u16", "u32", "u64", "boolean", "string", "nf4", "f8e4m3",
              "f8e5m2", "f4e2m1", "f8e8m0", "dynamic", "undefined", "FP32", "I64", "BOOL",
              "U1", "complex64", "x", ""]
DIM_VALUES = ["0", "1", "-1", "-2", "?", "", "1e309", "NaN", "0x10", "9223372036854775807",
              "99999999999999999999", "1000000000", "4611686018427387904", "3", "4", "10", "100"]


class FuzzFailure(AssertionError):
    """A case broke the contract: what it did, and the case's files."""

    def __init__(self, message: str, xml: bytes, weights: bytes):
        super().__init__(message)
        self.xml, self.weights = xml, weights


class Hang(BaseException):
    """Raised by the alarm; a BaseException, so no ``except Exception`` in irexec swallows it."""


class HypothesisRandom:
    """``randint`` and ``choice`` drawn from hypothesis's ``st.data()``."""

    def __init__(self, data):
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def randint(self, a: int, b: int) -> int:
        return self.data.draw(self.st.integers(a, b))

    def choice(self, seq):
        return seq[self.randint(0, len(seq) - 1)]


def samples() -> list[tuple[str, bytes, bytes]]:
    found = []
    for xml in sorted(SAMPLES.glob("*.xml")):
        found.append((xml.stem, xml.read_bytes(), xml.with_suffix(".bin").read_bytes()))
    return found


# --- mutations ----------------------------------------------------------------------------------

def _elements(root, tag=None):
    return [e for e in root.iter(tag if tag else etree.Element) if e is not root]


def _value(r) -> str:
    pool = r.choice([INT_VALUES, TEXT_VALUES, TYPE_NAMES])
    return r.choice(pool)


def _set_attr(r, root) -> str:
    elements = [e for e in _elements(root) if e.attrib]
    if not elements:
        return "none"
    e = r.choice(elements)
    name = r.choice(sorted(e.attrib))
    e.set(name, _value(r))
    return f"attr {e.tag}@{name}"


def _set_dim(r, root) -> str:
    dims = _elements(root, "dim")
    if not dims:
        return "none"
    r.choice(dims).text = r.choice(DIM_VALUES)
    return "dim"


def _set_edge(r, root) -> str:
    edges = _elements(root, "edge")
    if not edges:
        return "none"
    e = r.choice(edges)
    name = r.choice(["from-layer", "from-port", "to-layer", "to-port"])
    e.set(name, r.choice([str(r.randint(0, 6)), r.choice(INT_VALUES)]))
    return f"edge {name}"


def _set_port_id(r, root) -> str:
    ports = _elements(root, "port")
    if not ports:
        return "none"
    r.choice(ports).set("id", r.choice([str(r.randint(0, 4)), r.choice(INT_VALUES)]))
    return "port id"


def _set_type(r, root) -> str:
    names = ("element_type", "destination_type", "precision")
    found = [(e, n) for e in _elements(root) for n in names if e.get(n) is not None]
    if not found:
        return "none"
    e, n = r.choice(found)
    e.set(n, r.choice(TYPE_NAMES))
    return f"type {n}"


def _delete(r, root) -> str:
    elements = _elements(root)
    if not elements:
        return "none"
    e = r.choice(elements)
    e.getparent().remove(e)
    return f"delete {e.tag}"


def _duplicate(r, root) -> str:
    from copy import deepcopy

    elements = _elements(root)
    if not elements:
        return "none"
    e = r.choice(elements)
    e.getparent().append(deepcopy(e))
    return f"duplicate {e.tag}"


TREE_MUTATIONS = [_set_attr, _set_dim, _set_edge, _set_port_id, _set_type, _delete, _duplicate]


def _flip(r, data: bytes, count: int) -> bytes:
    if not data:
        return data
    buf = bytearray(data)
    for _ in range(count):
        buf[r.randint(0, len(buf) - 1)] = r.randint(0, 255)
    return bytes(buf)


def mutate(r, xml: bytes, weights: bytes) -> tuple[bytes, bytes, list[str]]:
    """One to four mutations of the tree, then perhaps a byte-level one of either file."""
    done = []
    root = etree.fromstring(xml)
    for _ in range(r.randint(0, 4)):
        done.append(r.choice(TREE_MUTATIONS)(r, root))
    xml = etree.tostring(root, xml_declaration=True, encoding="utf-8")
    kind = r.randint(0, 6)
    if kind == 1:
        xml = xml[:r.randint(0, len(xml))]
        done.append("truncate xml")
    elif kind == 2:
        xml = _flip(r, xml, r.randint(1, 8))
        done.append("flip xml")
    elif kind == 3:
        weights = weights[:r.randint(0, len(weights))]
        done.append("truncate bin")
    elif kind == 4:
        weights = _flip(r, weights, r.randint(1, 8))
        done.append("flip bin")
    elif kind == 5:
        weights = weights + bytes(r.randint(1, 64))
        done.append("extend bin")
    return xml, weights, done


# --- running a case -----------------------------------------------------------------------------

def _on_alarm(signum, frame):
    raise Hang()


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


_START_RSS = _peak_rss()


def run_case(xml: bytes, weights: bytes, folder: Path) -> str:
    """Write the case to ``folder`` and run it; return "ok" or the IRError's first code. Raises
    FuzzFailure when the case breaks the contract."""
    import irexec
    from irexec import budget
    from irexec.runtime.inputs import make_inputs

    folder.mkdir(parents=True, exist_ok=True)
    xml_path, bin_path = folder / "model.xml", folder / "model.bin"
    xml_path.write_bytes(xml)
    bin_path.write_bytes(weights)
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
    try:
        with budget.limit(budget.parse_size(BUDGET)):
            model = irexec.read_model(xml_path)
            compiled = irexec.compile_model(model)
            compiled(make_inputs(model, {}, 0))
        outcome = "ok"
    except irexec.IRError as e:
        outcome = e.code
    except Hang:
        raise FuzzFailure(f"hang: the case ran over {TIME_LIMIT} s", xml, weights) from None
    except Exception as e:  # the contract: IRError or nothing
        raise FuzzFailure(f"{type(e).__name__}: {e}\n{traceback.format_exc()}", xml,
                          weights) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    grown = _peak_rss() - _START_RSS
    if grown > MEMORY_BOUND:
        raise FuzzFailure(f"peak memory grew by {grown >> 20} MiB", xml, weights)
    return outcome


def save_crash(failure: FuzzFailure) -> Path:
    """Keep a failing case as a regression file: crashes/<hash>.xml and .bin."""
    CRASHES.mkdir(exist_ok=True)
    digest = hashlib.sha256(failure.xml + b"\0" + failure.weights).hexdigest()[:16]
    path = CRASHES / f"{digest}.xml"
    path.write_bytes(failure.xml)
    path.with_suffix(".bin").write_bytes(failure.weights)
    path.with_suffix(".txt").write_text(str(failure).splitlines()[0] + "\n", encoding="utf-8")
    return path


__all__ = ["FuzzFailure", "HypothesisRandom", "mutate", "run_case", "samples", "save_crash"]
