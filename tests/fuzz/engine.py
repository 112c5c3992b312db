"""The fuzzer's two halves, shared by tests/fuzz/test_fuzz.py (bounded, in CI) and tools/fuzz.py
(long runs): ``mutate`` breaks a valid sample model in ways an IR file can be broken, and
``run_case`` feeds the result to read_model + compile_model + one call.

The contract under test: each case either succeeds or raises ``IRError``. Any other exception, a
case using more than ``TIME_LIMIT`` seconds of CPU (or blocked for ``WALL_LIMIT`` seconds: a
FIFO opened, a device read), or the process's peak memory growing past ``MEMORY_BOUND`` bytes is
a failure (``FuzzFailure``). CPU time, not wall-clock time, so that a machine shared with other
work does not turn a slow moment into a failure that no rerun repeats.

Besides the two files' bytes, a case has a ``Setting`` (``draw_setting``): what the .bin path
is (a regular file, a FIFO, a folder, a device, links to them), whether links are refused, what
happens to the .bin between compiling and a second call (truncated, emptied, rewritten,
deleted: the second call must give exactly the first call's outputs), and whether the case also
goes through the command line, whose every output line must be one of irexec's (no name may
forge a line or carry a control character to the terminal).

The generators, by the class of bug each hunts (issue 15): attribute floods
(``_attribute_flood``), one-line files (``_one_line``, ``_many_layers``), non-regular paths and
truncation while running (the setting), control characters in names (``_control_names``),
huge-times-zero shapes and ranks numpy cannot hold (``_huge_zero_shape``, ``_deep_rank``).
Sub-graphs (the models of tests/data/subgraphs/ are samples too): absurd port-map values
(``_port_map_values``: axes, starts, ends, strides, part sizes), back edges that make no sense
(``_back_edges``: to the current iteration, twice into one Parameter, from nothing), bodies
nested from one to thousands deep (``_nested_bodies``); the cases run with an iteration limit of
``ITERATIONS`` so that a loop that never ends is refused within the case's time.

``mutate`` draws its choices from ``r``, anything with ``randint(a, b)`` and ``choice(seq)``:
``random.Random`` for plain loops, ``HypothesisRandom`` inside a hypothesis test (which can then
shrink a failing case to a small one).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import re
import resource
import shutil
import signal
import traceback
from pathlib import Path

from lxml import etree

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SUBGRAPHS = Path(__file__).resolve().parents[1] / "data" / "subgraphs"
ITERATIONS = "2000"  # IREXEC_MAX_ITERATIONS while a case runs
CRASHES = Path(__file__).resolve().parent / "crashes"
TIME_LIMIT = 5.0  # seconds of CPU a case may use
WALL_LIMIT = 60.0  # seconds a case may take in all (time blocked uses no CPU)
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
              "99999999999999999999", "1000000000", "4611686018427387904", "3", "4", "10", "100",
              "\uff12", "2\u3000", "\u0662"]
HUGE_DIMS = [0, 0, 1, 2, 3, 2**31, 2**32, 2**40, 2**61, 2**62, 2**63 - 1]
# Names that try to leave their line: XML allows all of these in an attribute value.
PORT_MAP_VALUES = ["0", "1", "-1", "2", "-2", "3", "7", "-7", "1000000", "-1000000",
                   "9223372036854775807", "-9223372036854775808", "99999999999999999999", "x", ""]
NESTING = [1, 2, 5, 19, 20, 21, 22, 100, 3000]
CONTROL_NAMES = ["x\nerror: evil.xml:1: forged line", "x\r", "\rwarning: fake", "a\tb",
                 "x\x85y", "x\u2028y", "x\u2029", "\u202eevil", "x\x9b[31mred", "x\x7f",
                 "\u200f\u2066x", "\n", "error: x\n  help: y", "\u00e9\u4e2d\U0001F600"]
FLOOD_SIZES = [2, 40, 500, 5000, 30000, 100000]
BIN_PATHS = ["file"] * 6 + ["fifo", "folder", "link", "link_to_fifo", "dangling_link",
                            "dev_zero", "missing"]
AFTER_COMPILE = ["none"] * 4 + ["truncate", "empty", "rewrite", "delete", "fifo"]


class FuzzFailure(AssertionError):
    """A case broke the contract: what it did, and the case's files."""

    def __init__(self, message: str, xml: bytes, weights: bytes, setting=None):
        super().__init__(message)
        self.xml, self.weights = xml, weights
        self.setting = setting if setting is not None else Setting()


class Hang(BaseException):
    """Raised by the timers; a BaseException, so no ``except Exception`` in irexec swallows
    it. Its argument says which limit was passed."""


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
    # Not the stateful model: its second call gives other outputs by design.
    subgraphs = [p for p in sorted(SUBGRAPHS.glob("*.xml")) if p.stem != "stateful"]
    for xml in sorted(SAMPLES.glob("*.xml")) + subgraphs:
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


_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;",
                          "\t": "&#9;"})


def _attribute_flood(r, root) -> str:
    """Many attributes on one element (100,000 took 97 s when reading was quadratic). The
    element is rebuilt from text: lxml's set() is itself quadratic in the attributes there."""
    from irexec.io.ir_reader import attributes

    elements = [e for e in _elements(root) if isinstance(e.tag, str)]
    if not elements:
        return "none"
    e = r.choice(elements)
    count = r.choice(FLOOD_SIZES)
    value = r.choice(["1", "", "x" * 50, r.choice(TEXT_VALUES[:20])])
    attrs = attributes(e)
    for i in range(count):
        attrs.setdefault(f"f{i:x}", value)
    text = "<" + e.tag + "".join(f' {k}="{v.translate(_ESCAPES)}"' for k, v in attrs.items())
    flood = etree.fromstring((text + "/>").encode("utf-8"))
    flood.text, flood.tail = e.text, e.tail
    flood.extend(list(e))
    e.getparent().replace(e, flood)
    return f"flood {count} on {e.tag}"


def _many_layers(r, root) -> str:
    """Copies of a layer, each with an unknown attribute: a warning per layer (on one line
    with ``_one_line``, 20,000 of them took 26 s)."""
    from copy import deepcopy

    layers = _elements(root, "layer")
    block = root.find("layers")
    if not layers or block is None:
        return "none"
    model = r.choice(layers)
    # At most a few MB of copies: a layer may already carry an attribute flood.
    count = min(r.choice([10, 200, 2000]), max(1, 4_000_000 // len(etree.tostring(model))))
    start = 1000
    for i in range(count):
        copy = deepcopy(model)
        copy.set("id", str(start + i))
        copy.set("name", f"copy{i}")
        data = copy.find("data")
        if data is not None:
            data.set("unknown", "1")
        block.append(copy)
    return f"{count} copies of a layer"


def _control_names(r, root) -> str:
    """Names (layer, tensor, output names) holding newlines, escapes, bidirectional marks."""
    found = [(e, a) for e in _elements(root) for a in ("name", "names", "output_names")
             if e.get(a) is not None]
    if not found:
        return "none"
    for _ in range(r.randint(1, 3)):
        e, a = r.choice(found)
        e.set(a, r.choice(CONTROL_NAMES) + r.choice(["", e.get(a)]))
    return "control characters in names"


def _shape_text(dims) -> str:
    return ",".join(str(d) for d in dims)


def _huge_zero_shape(r, root) -> str:
    """A shape mixing 0 with huge dims ([2**62, 0] holds nothing, yet numpy cannot make it),
    written consistently on a layer's shape attribute and its ports, or on one port."""
    dims = [r.choice(HUGE_DIMS) for _ in range(r.randint(1, 4))]
    if 0 not in dims and r.randint(0, 2):
        dims[r.randint(0, len(dims) - 1)] = 0
    layers = [e for e in _elements(root, "layer") if e.find("data") is not None
              and e.find("data").get("shape") is not None]
    if layers and r.randint(0, 1):
        layer = r.choice(layers)
        layer.find("data").set("shape", _shape_text(dims))
        ports = [p for p in layer.iter("port")]
        done = f"shape {dims} on {layer.get('type')}"
    else:
        ports = _elements(root, "port")
        if not ports:
            return "none"
        ports = [r.choice(ports)]
        done = f"port dims {dims}"
    for port in ports:
        for dim in port.findall("dim"):
            port.remove(dim)
        for d in dims:
            etree.SubElement(port, "dim").text = str(d)
    return done


def _deep_rank(r, root) -> str:
    """More dims than numpy holds (65 made validate exit 3), on a shape attribute or a port."""
    rank = r.choice([63, 64, 65, 66, 100, 1000])
    dims = [1] * rank
    layers = [e for e in _elements(root, "layer") if e.find("data") is not None
              and e.find("data").get("shape") is not None]
    if layers and r.randint(0, 1):
        layer = r.choice(layers)
        layer.find("data").set("shape", _shape_text(dims))
        ports = list(layer.iter("port"))
    else:
        ports = _elements(root, "port")
        ports = [r.choice(ports)] if ports else []
    for port in ports:
        for dim in port.findall("dim"):
            port.remove(dim)
        for d in dims:
            etree.SubElement(port, "dim").text = str(d)
    return f"rank {rank}"


def _port_map_values(r, root) -> str:
    """A port map entry's axis, start, end, stride or part size set to anything (a part size
    of 0 divided by zero; an end of 10**12 ran 10**12 iterations)."""
    entries = [e for m in root.iter("port_map", "then_port_map", "else_port_map") for e in m
               if isinstance(e.tag, str)]
    if not entries:
        return "none"
    done = []
    for _ in range(r.randint(1, 3)):
        e = r.choice(entries)
        name = r.choice(["axis", "start", "end", "stride", "part_size", "external_port_id",
                         "internal_layer_id"])
        e.set(name, r.choice(PORT_MAP_VALUES))
        done.append(name)
    return f"port map {','.join(done)}"


def _back_edges(r, root) -> str:
    """Back edges between any body layers: into the current iteration's Parameter, two into
    one Parameter, from a layer that is not a Result, to nothing."""
    blocks = list(root.iter("back_edges"))
    if not blocks:
        return "none"
    block = r.choice(blocks)
    layer = block.getparent()
    body = layer.find("body")
    ids = [e.get("id") for e in body.iter("layer")] if body is not None else []
    ids += ["99", "-1", "x"]
    for _ in range(r.randint(1, 4)):
        etree.SubElement(block, "edge", {"from-layer": r.choice(ids), "to-layer": r.choice(ids)})
    return "back edges"


def nested_bodies(depth: int) -> bytes:
    """A model of TensorIterators nested ``depth`` deep (each body holds the next), each
    running its body once on the whole of its input (one slice), so the model returns its
    input; built from the inside out: no recursion, whatever the depth."""
    param = ('<layer id="0" name="{}" type="Parameter" version="opset1"><data shape="2" '
             'element_type="f32"/><output><port id="0" precision="FP32"><dim>2</dim></port>'
             '</output></layer>')
    result = ('<layer id="{}" name="r" type="Result" version="opset1"><input><port id="0" '
              'precision="FP32"><dim>2</dim></port></input></layer>')
    edge = '<edge from-layer="{}" from-port="{}" to-layer="{}" to-port="0"/>'
    body = (f'<body><layers>{param.format("p")}{result.format(1)}</layers><edges>'
            f'{edge.format(0, 0, 1)}</edges></body>')
    inner = 1  # the id of the body's Result
    whole = 'axis="0" start="0" end="-1" stride="1" part_size="2"'  # one slice: all of it
    layer = ""
    for level in range(1, depth + 1):
        layer = (f'<layer id="1" name="ti{level}" type="TensorIterator" version="opset1">'
                 f'<port_map><input external_port_id="0" internal_layer_id="0" {whole}/>'
                 f'<output external_port_id="1" internal_layer_id="{inner}" {whole}/>'
                 f'</port_map><input><port '
                 f'id="0" precision="FP32"><dim>2</dim></port></input><output><port id="1" '
                 f'precision="FP32"><dim>2</dim></port></output>{body}</layer>')
        body = (f'<body><layers>{param.format("p")}{layer}{result.format(2)}</layers><edges>'
                f'{edge.format(0, 0, 1)}{edge.format(1, 1, 2)}</edges></body>')
        inner = 2
    return ('<?xml version="1.0"?>\n<net name="nested" version="11"><layers>'
            f'{param.format("x")}{layer}{result.format(2)}</layers><edges>'
            f'{edge.format(0, 0, 1)}{edge.format(1, 1, 2)}</edges></net>\n').encode()


def _nested_bodies(r, root) -> str:
    """The model replaced by TensorIterators nested one to thousands deep."""
    depth = r.choice(NESTING)
    nested = etree.fromstring(nested_bodies(min(depth, 80)), etree.XMLParser(huge_tree=True))
    if depth > 80:  # deeper than libxml2 parses by default: spliced in as text (see mutate)
        root.set("nested", str(depth))
    for child in list(root):
        root.remove(child)
    root.extend(list(nested))
    return f"bodies nested {depth} deep"


TREE_MUTATIONS = [_set_attr, _set_dim, _set_edge, _set_port_id, _set_type, _delete, _duplicate,
                  _attribute_flood, _many_layers, _control_names, _huge_zero_shape, _deep_rank,
                  _port_map_values, _back_edges, _nested_bodies]


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
    depth = root.get("nested")
    xml = etree.tostring(root, xml_declaration=True, encoding="utf-8")
    if depth is not None:  # lxml will not hold it as a tree; the text is made directly
        xml = nested_bodies(int(depth))
    if r.randint(0, 5) == 0:  # the whole file on one line
        xml = re.sub(rb">\s+<", b"><", xml).replace(b"\n", b" ")
        done.append("one line")
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
    if signum == signal.SIGPROF:
        raise Hang(f"the case used over {TIME_LIMIT} s of CPU")
    raise Hang(f"the case was blocked for {WALL_LIMIT} s")


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


_START_RSS = _peak_rss()


@dataclasses.dataclass
class Setting:
    """How a case is laid out and run beyond its two files' bytes (see the module's docstring).
    The default is the plain case: a regular .bin, one call, the library only."""

    bin_path: str = "file"  # one of BIN_PATHS
    no_symlinks: bool = False
    after_compile: str = "none"  # one of AFTER_COMPILE
    keep: int = 0  # bytes of the .bin kept by "truncate"
    cli: bool = False

    def describe(self) -> str:
        changed = {k: v for k, v in dataclasses.asdict(self).items()
                   if v != getattr(Setting, k)}
        return ", ".join(f"{k}={v}" for k, v in changed.items()) or "plain"


def draw_setting(r) -> Setting:
    return Setting(bin_path=r.choice(BIN_PATHS), no_symlinks=r.randint(0, 3) == 0,
                   after_compile=r.choice(AFTER_COMPILE), keep=r.randint(0, 64),
                   cli=r.randint(0, 5) == 0)


def _clear(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for p in folder.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def _lay_out(folder: Path, xml: bytes, weights: bytes, setting: Setting) -> Path:
    """Write the case: model.xml, and model.bin as the setting says."""
    _clear(folder)
    xml_path, bin_path = folder / "model.xml", folder / "model.bin"
    xml_path.write_bytes(xml)
    kind = setting.bin_path
    if kind == "file":
        bin_path.write_bytes(weights)
    elif kind == "fifo":
        os.mkfifo(bin_path)
    elif kind == "folder":
        bin_path.mkdir()
    elif kind == "link":
        (folder / "real.bin").write_bytes(weights)
        os.symlink(folder / "real.bin", bin_path)
    elif kind == "link_to_fifo":
        os.mkfifo(folder / "real.fifo")
        os.symlink(folder / "real.fifo", bin_path)
    elif kind == "dangling_link":
        os.symlink(folder / "nowhere.bin", bin_path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", bin_path)
    return xml_path


def _change_bin(bin_path: Path, setting: Setting) -> None:
    """What a converter rewriting the .bin in place does to a running model's file."""
    if not os.path.isfile(bin_path):  # follows links: the file a link names changes
        return
    how = setting.after_compile
    if how == "truncate":
        os.truncate(bin_path, min(setting.keep, os.path.getsize(bin_path)))
    elif how == "empty":
        os.truncate(bin_path, 0)
    elif how == "rewrite":
        size = os.path.getsize(bin_path)
        with open(bin_path, "r+b") as f:
            f.write(bytes((i * 37 + 11) % 256 for i in range(size)))
    elif how == "delete":
        os.unlink(bin_path)
    elif how == "fifo":
        os.unlink(bin_path)
        os.mkfifo(bin_path)


def _same_outputs(a: dict, b: dict) -> bool:
    import numpy as np

    if list(a) != list(b):
        return False
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.dtype.kind == "O":
            if x.tolist() != y.tolist():
                return False
        elif np.ascontiguousarray(x).tobytes() != np.ascontiguousarray(y).tobytes():
            return False
    return True


# Every line irexec prints, by where it prints it; and what no line may hold.
_VALIDATE_LINE = re.compile(r"^(?:.+?(?::\d+){0,2}: IR\d{3} [a-z0-9-]+: .*|  help: .*|"
                            r"\d+ errors?, \d+ warnings? in \d+ files?)$")
_RUN_LINE = re.compile(r"^(?:inputs \(.*\):|outputs:|  .*|saved .*|traced .*)$")
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _cli_problem(command: str, status: int, out: str, err: str) -> str | None:
    if status not in (0, 1):
        return f"irexec {command} exited {status}: {err.strip()[:500]}"
    for stream, text in (("stdout", out), ("stderr", err)):
        lines = text.split("\n")  # not splitlines(): it breaks at \x85 and \u2028 too
        for line in lines[:-1] if not lines[-1] else lines:
            if _UNSAFE.search(line):
                return f"irexec {command} printed a control character on {stream}: {line!r}"
            if stream == "stderr" and not line.startswith(("error: ", "warning: ", "note: ")):
                return f"irexec {command} printed a line of its own on stderr: {line!r}"
            if stream == "stdout" and command == "validate" and not _VALIDATE_LINE.match(line):
                return f"irexec validate printed a line of no diagnostic: {line!r}"
            if stream == "stdout" and command == "run" and not _RUN_LINE.match(line):
                return f"irexec run printed a stray line: {line!r}"
    return None


def _through_the_cli(xml_path: Path, setting: Setting) -> str | None:
    from irexec.cli.main import main

    for command in ("validate", "run"):
        args = [command, *(["--no-follow-symlinks"] if setting.no_symlinks else []),
                str(xml_path)]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(args)
        problem = _cli_problem(command, status, out.getvalue(), err.getvalue())
        if problem:
            return problem
    return None


@contextlib.contextmanager
def _environment(name: str, value: str):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def run_case(xml: bytes, weights: bytes, folder: Path, setting: Setting | None = None) -> str:
    """Write the case to ``folder`` and run it; return "ok" or the IRError's first code. Raises
    FuzzFailure when the case breaks the contract."""
    import irexec
    from irexec import budget
    from irexec.io import files
    from irexec.runtime.inputs import make_inputs

    setting = setting or Setting()
    xml_path = _lay_out(folder, xml, weights, setting)
    old = signal.signal(signal.SIGALRM, _on_alarm), signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT * (2 if setting.cli else 1))
    signal.setitimer(signal.ITIMER_REAL, WALL_LIMIT)
    problem = None
    try:
        with budget.limit(budget.parse_size(BUDGET)), files.no_symlinks(setting.no_symlinks), \
                _environment(budget.ITERATIONS_ENV, ITERATIONS):
            try:
                model = irexec.read_model(xml_path)
                compiled = irexec.compile_model(model)
                inputs = make_inputs(model, {}, 0)
                first = compiled(inputs)
                if setting.after_compile != "none":
                    _change_bin(folder / "model.bin", setting)
                    if not _same_outputs(first, compiled(inputs)):
                        problem = (f"the outputs changed after the .bin was changed "
                                   f"({setting.after_compile}) under the compiled model")
                outcome = "ok"
            except irexec.IRError as e:
                outcome = e.code
            if setting.cli and problem is None:
                _lay_out(folder, xml, weights, setting)
                problem = _through_the_cli(xml_path, setting)
    except Hang as e:
        raise FuzzFailure(f"hang: {e} ({setting.describe()})", xml, weights, setting) from None
    except Exception as e:  # the contract: IRError or nothing
        raise FuzzFailure(f"{type(e).__name__}: {e} ({setting.describe()})\n"
                          f"{traceback.format_exc()}", xml, weights, setting) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, old[0])
        signal.signal(signal.SIGPROF, old[1])
    if problem is not None:
        raise FuzzFailure(f"{problem} ({setting.describe()})", xml, weights, setting)
    grown = _peak_rss() - _START_RSS
    if grown > MEMORY_BOUND:
        raise FuzzFailure(f"peak memory grew by {grown >> 20} MiB", xml, weights, setting)
    return outcome


def save_crash(failure: FuzzFailure) -> Path:
    """Keep a failing case as a regression file: crashes/<hash>.xml and .bin, the setting in
    .json when it is not the plain one, and .txt saying what went wrong."""
    CRASHES.mkdir(exist_ok=True)
    setting = json.dumps(dataclasses.asdict(failure.setting), sort_keys=True).encode()
    digest = hashlib.sha256(failure.xml + b"\0" + failure.weights + b"\0" + setting).hexdigest()
    path = CRASHES / f"{digest[:16]}.xml"
    path.write_bytes(failure.xml)
    path.with_suffix(".bin").write_bytes(failure.weights)
    if failure.setting != Setting():
        path.with_suffix(".json").write_bytes(setting + b"\n")
    path.with_suffix(".txt").write_text(str(failure).splitlines()[0] + "\n", encoding="utf-8")
    return path


def load_crash(path: Path) -> tuple[bytes, bytes, Setting]:
    """A kept case: its .xml, .bin and setting."""
    weights = path.with_suffix(".bin")
    setting = path.with_suffix(".json")
    return (path.read_bytes(), weights.read_bytes() if weights.exists() else b"",
            Setting(**json.loads(setting.read_text())) if setting.exists() else Setting())


__all__ = ["FuzzFailure", "HypothesisRandom", "Setting", "draw_setting", "load_crash", "mutate",
           "run_case", "samples", "save_crash"]
