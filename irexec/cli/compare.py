"""``irexec compare MODEL [--with openvino]``: run a model in irexec and in OpenVINO on the same
inputs and compare every layer's outputs, naming the first layer that diverges.

OpenVINO's intermediate tensors are not outputs of its compiled model, so the OpenVINO model gets
one extra Result per output port of every layer irexec computes (never after a sink such as
Assign, whose output OpenVINO's graph does not offer); layers are matched by name (the IR's layer
name is OpenVINO's friendly name). OpenVINO's CPU plugin runs with
``INFERENCE_PRECISION_HINT=f32`` so that a host preferring bf16 does not lower f32 layers, and
with dynamic quantization off (``DYNAMIC_QUANTIZATION_GROUP_SIZE=0``: on AVX-512 and AMX hosts it
would quantize activations feeding int8/int4 weights). OpenVINO runs in a child process
(irexec/cli/child.py): a crash inside it (a signal) is one error line, not the command's death.

Layers that only move data (their outputs are copies of input elements) must agree bit for bit
whatever the tolerances; other layers agree when equal (NaN with NaN, -0.0 with 0.0), or within
the tolerance of their op family and element type in irexec's one tolerance table
(irexec/numerics.py, docs/numerics.md; ``--tolerance exact`` asks for equal values instead), or
within ``--rtol``/``--atol`` where given (for every layer, or one layer: ``--rtol NAME=R``).
Integer and boolean results are always exact. Each layer's largest absolute and relative error
and its error in units in the last place (ULPs) of its element type are reported.
``--precise`` compares with irexec's own precise mode (every float layer in float64, rounded once)
instead of OpenVINO. OpenVINO is an optional oracle: when it is missing, the command says how to
install it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from irexec import numerics
from irexec.api import check_runnable, compile_model
from irexec.cli import child, common
from irexec.cli.columns import aligned
from irexec.cli.usage import UsageError
from irexec.diagnostics import printable
from irexec.io import bin_layout
from irexec.ir import element_type as et_table
from irexec.ir.model import Model, Node

# Dynamic quantization off: on AVX-512/AMX hosts the plugin otherwise quantizes the
# activations that meet int8/int4 weights, a speed option that departs from the IR by ~1e-2.
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
INSTALL_OPENVINO = ("irexec compare --with openvino needs OpenVINO, which is not installed here; "
                    "install it with: pip install openvino (in a clone of irexec: pip install "
                    "'.[oracle]')")


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="compare every layer's outputs with OpenVINO",
                       description="Run the model in irexec and in OpenVINO on the same inputs "
                                   "and report, layer by layer, whether the outputs agree, the "
                                   "first layer that diverges and by how much. Exit 0 when all "
                                   "agree, 1 when a layer differs or the comparison cannot run.")
    common.add_model_arguments(p, onnx=False)
    p.add_argument("--with", dest="oracle", choices=("openvino",), default="openvino",
                   help="the runtime to compare with (default: openvino)")
    common.add_input_arguments(p)
    p.add_argument("--tolerance", choices=("table", "exact"), default="table",
                   help="table: each layer within its op family's tolerance for its element type "
                        f"({common.doc('numerics.md')}; the default); exact: equal values")
    p.add_argument("--rtol", type=_tolerance, action="append", default=[], metavar="[NAME=]R",
                   help="relative tolerance for every computing layer, or (NAME=R) for the "
                        "layer NAME; overrides the table there (repeatable)")
    p.add_argument("--atol", type=_tolerance, action="append", default=[], metavar="[NAME=]A",
                   help="absolute tolerance, for every computing layer or (NAME=A) one layer")
    p.add_argument("--precise", action="store_true",
                   help="compare with irexec's precise mode (float64, rounded once per layer) "
                        "instead of OpenVINO")


def _tolerance(text: str) -> tuple[str | None, float]:
    """``R`` or ``NAME=R``; argparse turns ValueError into a usage error."""
    name, sep, number = text.rpartition("=")
    value = float(number)
    if not value >= 0 or value == float("inf"):
        raise ValueError(text)
    return (name if sep else None), value


@dataclass(frozen=True)
class Tolerances:
    """How close each layer must be: explicit --rtol/--atol where given (a layer's own first,
    then the global one), else the table's (or exact)."""

    mode: str = "table"  # or "exact"
    rtol: tuple = ()  # (name or None, value) pairs as given
    atol: tuple = ()
    against_openvino: bool = True

    @staticmethod
    def _given(pairs, name: str, port: str):
        for key in (port, name, None):
            for n, v in pairs:
                if n == key:
                    return v
        return None

    def for_layer(self, node: Node, port: int, et, inherited=()) -> numerics.Tolerance:
        """The layer's tolerance; ``inherited``: those of its inputs that already differ from
        the reference (in table mode a computing layer fed by them is allowed as much)."""
        own = self._own(node, port, et)
        key = f"{node.name}:{port}"
        explicit = (self._given(self.rtol, node.name, key) is not None
                    or self._given(self.atol, node.name, key) is not None)
        if self.mode != "table" or explicit or et is None or not inherited:
            return own
        every = (own, *inherited)
        return numerics.Tolerance(max(t.rtol for t in every), max(t.atol for t in every),
                                  max(t.accum for t in every), max(t.eps for t in every))

    def _table(self, node: Node, et) -> numerics.Tolerance | None:
        if self.mode == "exact" or et is None:
            return None
        family = numerics.family(node.op.spec) if node.op is not None else numerics.ACCUMULATING
        return numerics.tolerance(family, et, self.against_openvino)

    def _own(self, node: Node, port: int, et) -> numerics.Tolerance:
        key = f"{node.name}:{port}"
        rtol = self._given(self.rtol, node.name, key)
        atol = self._given(self.atol, node.name, key)
        if rtol is not None or atol is not None:
            return numerics.Tolerance(rtol or 0.0, atol or 0.0, 0.0, 0.0)
        return self._table(node, et) or numerics.Tolerance(0.0, 0.0, 0.0, 0.0)

    def names(self) -> set[str]:
        return {n for n, _ in (*self.rtol, *self.atol) if n is not None}


@dataclass
class LayerResult:
    node: Node
    port: int
    ours: np.ndarray
    theirs: np.ndarray | None  # None: OpenVINO has no layer of this name
    verdict: str = ""  # bit-exact, equal, close, DIFFERS, not in OpenVINO
    max_abs: float | None = None
    differing: int = 0
    note: str = ""
    max_rel: float | None = None
    max_ulps: float | None = None
    tolerance: numerics.Tolerance | None = None  # the one the layer was judged by

    @property
    def agrees(self) -> bool:
        return self.verdict != "DIFFERS"


def _describe(array: np.ndarray) -> str:
    return f"{common.type_name(array)} [{','.join(map(str, array.shape))}]"


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a if a.dtype == np.bool_ else a.view(f"u{a.dtype.itemsize}")


def judge(r: LayerResult, tolerances: Tolerances, inherited=(), carried=None) -> None:
    """Fill in the verdict and the size of the difference of one layer output (``inherited``:
    the tolerances of its inputs that already differ from the reference; ``carried``: the
    largest absolute difference of those inputs, None when every input is bit-exact, negative
    when one of them differs beyond its tolerance)."""
    a, b = r.ours, r.theirs
    if b is None:
        r.verdict = "not in OpenVINO"
        return
    if a.dtype != b.dtype or a.shape != b.shape:
        r.verdict, r.note = "DIFFERS", f"OpenVINO gives {_describe(b)}"
        r.differing = max(a.size, b.size)
        return
    if np.array_equal(_bits(a), _bits(b)):
        r.verdict = "bit-exact"
        return
    kind = a.dtype.kind
    if kind in "fc" or a.dtype in (et_table.ElementType.bf16.dtype,):
        x, y = a.astype(np.complex128 if kind == "c" else np.float64), \
            b.astype(np.complex128 if kind == "c" else np.float64)
        both_nan = np.isnan(x) & np.isnan(y)
        same = (x == y) | both_nan
        with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
            diff = np.where(same, 0.0, np.abs(x - y))
        finite = diff[np.isfinite(diff)]
        r.max_abs = float(finite.max()) if finite.size else float("inf")
        r.differing = int((~same).sum())
        et = et_table.from_dtype(a.dtype) if kind != "c" else None
        if et is not None:
            errors = numerics.errors(a, b, et)
            r.max_rel, r.max_ulps = errors.max_rel, errors.max_ulps
        tol = r.tolerance = tolerances.for_layer(r.node, r.port, et, inherited)
        if r.differing == 0:
            r.verdict = "equal"  # -0.0 against 0.0, or NaNs of different payloads
            r.note = "same values, different bits"
        elif kind == "c":
            close = np.abs(x - y) <= tol.atol + tol.rtol * np.abs(y)
            r.verdict = "close" if np.all(same | close) else "DIFFERS"
        else:
            # An accumulating op's sum of magnitudes is unknown here: the layer's largest
            # reference magnitude stands for it.
            finite_ref = np.abs(y[np.isfinite(y)])
            scale = float(finite_ref.max()) if tol.accum and finite_ref.size else None
            r.verdict = "DIFFERS" if tol.outside(a, b, scale).any() else "close"
        if (r.node.op is not None and r.node.op.spec.exact
                and (carried is not None or r.verdict != "DIFFERS")):
            # Data movement copies its inputs' elements: bit-exact when they are, and never
            # further from the reference than the inputs it moves when they already differ.
            if carried is None:
                r.verdict, r.note = "DIFFERS", "data movement must be bit-exact"
                r.differing = int((_bits(a) != _bits(b)).sum())
            elif not r.max_abs <= abs(carried):
                r.verdict = "DIFFERS"
                r.note = f"data movement added to its inputs' difference ({abs(carried):.6g})"
            elif carried < 0:  # an input it moves differs beyond its own tolerance
                r.verdict, r.note = "DIFFERS", "moves a differing input"
            else:
                r.verdict, r.note = "close", "moves its inputs' difference"
        return
    different = _bits(a) != _bits(b)
    r.differing = int(different.sum())
    if kind in "iu":
        r.max_abs = float(np.abs(a[different].astype(np.float64) -
                                 b[different].astype(np.float64)).max())
    r.verdict = "DIFFERS"


def _openvino():
    try:
        import openvino as ov
    except ImportError:
        return None
    return ov


def _first_line(error: Exception) -> str:
    """OpenVINO's exceptions carry a C++ trail ('Exception from src/...', 'Check ...'): keep the
    first line that says what is wrong."""
    lines = [s.strip() for s in str(error).splitlines() if s.strip()]
    useful = [s for s in lines if not s.startswith(("Exception from", "Check '", "["))
              and s.rstrip(":") not in ("Not Implemented", "General error")]
    text = (useful or lines or [type(error).__name__])[0]
    return text if len(text) <= 300 else text[:297] + "..."


class OracleError(Exception):
    pass


def tap_openvino_outputs(ov_model, wanted: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Give OpenVINO's model an extra Result for each (layer name, port) in ``wanted`` that its
    graph has; the index of each one's output among the model's outputs."""
    import openvino.opset1 as ops

    by_name: dict = {}
    for op in ov_model.get_ordered_ops():  # a Result named as the layer it reads comes after
        by_name.setdefault(op.get_friendly_name(), op)
    index: dict[tuple[str, int], int] = {}
    for name, port in wanted:
        op = by_name.get(name)
        if op is None or port >= op.get_output_size():
            continue
        result = ops.result(op.output(port))
        result.set_friendly_name(f"irexec_compare/{name}/{port}")
        ov_model.add_results([result])
        index[(name, port)] = ov_model.get_result_index(result)
    return index


def run_openvino(ov, path: str, weights, inputs: dict[str, np.ndarray],
                 wanted: list[tuple[str, int]]) -> dict[tuple[str, int], np.ndarray]:
    """OpenVINO's value of each (layer name, port) in ``wanted`` that its graph has (in this
    process: :func:`run_openvino_apart` runs it in a child)."""
    core = ov.Core()
    try:
        ov_model = core.read_model(path, weights) if weights else core.read_model(path)
    except Exception as e:  # OpenVINO raises RuntimeError and its own types
        raise OracleError(f"OpenVINO cannot read the model: {_first_line(e)}") from None
    index = tap_openvino_outputs(ov_model, wanted)
    try:
        compiled = core.compile_model(ov_model, "CPU", OV_CONFIG)
        request = compiled.create_infer_request()
        order = {p.get_friendly_name(): i for i, p in enumerate(ov_model.get_parameters())}
        request.infer({order[name]: openvino_tensor(ov, value) for name, value in inputs.items()})
    except Exception as e:
        raise OracleError(f"OpenVINO cannot run the model: {_first_line(e)}") from None
    out = {}
    for key, i in index.items():
        out[key] = from_openvino_tensor(ov, request.get_tensor(compiled.outputs[i]))
    return out


def _openvino_job(path: str, weights, inputs, wanted):
    import openvino as ov

    return run_openvino(ov, path, weights, inputs, wanted)


def run_openvino_apart(path: str, weights, inputs: dict[str, np.ndarray],
                       wanted: list[tuple[str, int]]) -> dict[tuple[str, int], np.ndarray]:
    """:func:`run_openvino` in a child process: OpenVINO's CPU plugin can die of a signal on
    some inputs (SIGFPE dividing INT64_MIN by -1 in FloorMod), which becomes an OracleError."""
    try:
        return child.call(_openvino_job, str(path), weights, inputs, wanted)
    except child.ChildDied as e:
        raise OracleError(f"OpenVINO {e.how()} while running the model (in a child process; "
                          f"irexec's side ran): nothing to compare with") from None
    except child.ChildFailed as e:
        if e.type_name == OracleError.__name__:
            raise OracleError(e.message) from None
        if e.type_name == "MemoryError":
            raise OracleError("OpenVINO ran out of memory running the model") from None
        raise RuntimeError(f"running OpenVINO in a child process: {e}") from None


def openvino_tensor(ov, value: np.ndarray):
    """An OpenVINO tensor holding ``value`` bit for bit. OpenVINO keeps tensors in the .bin
    layout (narrow types packed), and its Python API would convert ml_dtypes arrays by value
    (bf16 through float16) or refuse them: every type but numpy's own goes in as bytes."""
    et = et_table.from_dtype(value.dtype)
    if et.kind == "string":
        return ov.Tensor(np.asarray(value, dtype=str))
    if value.dtype.type.__module__ == "numpy" and value.dtype.names is None:
        return np.ascontiguousarray(value).reshape(value.shape)  # a scalar stays 0-d
    raw = np.frombuffer(bin_layout.encode(et, value), np.uint8)
    return ov.Tensor(raw, ov.Shape(list(value.shape)), getattr(ov.Type, et.name))


def from_openvino_tensor(ov, tensor) -> np.ndarray:
    """The inverse of :func:`openvino_tensor`, for an output (padding bits are ignored)."""
    et = et_table.from_name(tensor.element_type.get_type_name())
    shape = tuple(tensor.shape)
    if et.kind == "string":
        return np.array(tensor.str_data, dtype=object).reshape(shape)
    if et.dtype.type.__module__ == "numpy" and et.dtype.names is None:
        return np.array(tensor.data, copy=True)
    raw = np.asarray(tensor.data).reshape(-1).view(np.uint8).tobytes()
    return bin_layout.decode(et, raw, 0, len(raw), shape).copy()


def _layer_outputs(model: Model, inputs, config=None) -> list[tuple[Node, int, np.ndarray]]:
    """Every computed layer output; not Parameters (given), nor sinks (an Assign's output is its
    input, compared where it is made; OpenVINO's graph has no output port to fetch there)."""
    outputs: list[tuple[Node, int, np.ndarray]] = []
    compile_model(model, config=config)(
        inputs, trace=lambda node, port, array: outputs.append((node, port, array)))
    return [(n, p, a) for n, p, a in outputs
            if n.role != "parameter" and (n.op is None or n.op.spec.role != "sink")]


def run_precise(model: Model, inputs) -> dict[tuple[str, int], np.ndarray]:
    """irexec's precise-mode value of every computed layer output, each computed from the inputs
    the default mode gives that layer: every layer is judged on its own, not on the drift of the
    layers before it."""
    compiled = compile_model(model, config={"fusion": "off"})  # a step per layer, as precise
    default = compiled.plan
    precise = compile_model(model, config={"precision": "f64"}).plan
    nodes = {str(n.id): n for n in model.nodes}
    values: list = [None] * default.num_slots
    for s, array in default.constants.items():
        values[s] = array
    for slot in default.inputs:
        values[slot.slot] = compiled.check_input(slot.name, inputs[slot.name])
    out = {}
    for mine, reference in zip(default.steps, precise.steps):
        args = [values[i] for i in mine.inputs]
        if mine.check is not None:
            mine.check(args)
        ours, theirs = mine.kernel(*args), reference.kernel(*args)
        if len(mine.outputs) == 1:
            ours, theirs = (ours,), (theirs,)
        node = nodes[mine.location.layer_id]
        for port, (s, a, b) in enumerate(zip(mine.outputs, ours, theirs)):
            values[s] = a
            out[(node.name, port)] = b
    return out


def compare(model: Model, inputs: dict[str, np.ndarray], ov, weights=None,
            tolerances: Tolerances | None = None) -> list[LayerResult]:
    """Every computed layer output of irexec against OpenVINO's (``ov`` None: against irexec's
    precise mode), in irexec's run order."""
    tolerances = tolerances or Tolerances(against_openvino=ov is not None)
    computed = _layer_outputs(model, inputs)
    if ov is None:
        theirs = run_precise(model, inputs)
    else:
        theirs = run_openvino_apart(model.path, weights, inputs,
                                    [(n.name, p) for n, p, _ in computed])
    results = []
    differing: dict = {}  # OutputPort -> the tolerance of a layer output that is not bit-exact
    sizes: dict = {}  # OutputPort -> its largest absolute difference, where it has one
    for node, port, array in computed:
        r = LayerResult(node, port, np.asarray(array), theirs.get((node.name, port)))
        inherited = [differing[p.source] for p in node.inputs if p.source in differing]
        carried = [sizes[p.source] for p in node.inputs if p.source in sizes]
        size = max(abs(c) for c in carried) if carried else None
        judge(r, tolerances, inherited, -size if any(c < 0 for c in carried) else size)
        if r.verdict not in ("bit-exact", "equal") and r.tolerance is not None:
            differing[node.outputs[port]] = r.tolerance
            if r.max_abs is not None:
                sizes[node.outputs[port]] = r.max_abs if r.agrees else -r.max_abs
        results.append(r)
    return results


def _not_openvino_layers(model: Model) -> list[Node]:
    return [n for n in model.nodes if not n.version.startswith("opset")]


def _size(r: LayerResult) -> str:
    if r.verdict in ("bit-exact", "not in OpenVINO") or r.max_abs is None:
        return ""
    return f"{r.max_abs:.6g}"


def _rel(r: LayerResult) -> str:
    return "" if not _size(r) or r.max_rel is None else f"{r.max_rel:.3g}"


def _ulps(r: LayerResult) -> str:
    return "" if not _size(r) or r.max_ulps is None else f"{r.max_ulps:.3g}"


def report(results: list[LayerResult], multi_port: set[str]) -> list[str]:
    rows = [("layer", "type", "output", "result", "max abs diff", "differing", "max rel diff",
             "ulps", "note")]
    for r in results:
        name = f"{r.node.name}:{r.port}" if r.node.name in multi_port else r.node.name
        rows.append((name, r.node.type, _describe(r.ours), r.verdict, _size(r),
                     f"{r.differing} of {r.ours.size}" if r.differing else "", _rel(r),
                     _ulps(r), r.note))
    return aligned(rows)


def _describe_tolerances(args) -> str:
    parts = [f"the table ({common.doc('numerics.md')})" if args.tolerance == "table"
             else "exact"]
    for flag, pairs in (("rtol", args.rtol), ("atol", args.atol)):
        parts += [f"{flag} {v:g}" + (f" for {n}" if n else "") for n, v in pairs]
    return ", ".join(parts)


def _check_tolerance_names(args, model: Model) -> None:
    named = {n for n, _ in (*args.rtol, *args.atol) if n is not None}
    unknown = sorted(named - {n.name for n in model.nodes}
                     - {f"{n.name}:{i}" for n in model.nodes for i in range(len(n.outputs))})
    if unknown:
        raise UsageError(f"--rtol/--atol name {unknown[0]!r}, which is no layer of the model")


def execute(args) -> int:
    model = common.load_model(args, runs=True)
    check_runnable(model)  # before asking for OpenVINO: irexec's side cannot run either way
    if model.path is None or not str(model.path).lower().endswith(".xml"):
        raise UsageError("irexec compare takes an IR .xml file (convert an ONNX model with "
                         "irexec convert first)")
    _check_tolerance_names(args, model)  # a usage error, whether or not OpenVINO is here
    if args.precise:
        ov = None
    else:
        ov = _openvino()
        if ov is None:
            print(f"error: {INSTALL_OPENVINO}", file=sys.stderr)
            return 1
    refused = [] if ov is None else [(n, n.op.openvino_refuses(n)) for n in model.nodes
               if n.op is not None and n.op.openvino_refuses is not None]
    refused = [(n, why) for n, why in refused if why]
    if refused:
        node, why = refused[0]
        print(printable.line(f"error: {args.model}: layer '{node.name}' ({node.type}): {why}; "
                             f"nothing to compare with"), file=sys.stderr)
        return 1
    foreign = _not_openvino_layers(model) if ov is not None else []
    if foreign:
        layers = ", ".join(f"'{n.name}' ({n.type}-{n.version})" for n in foreign[:3])
        print(printable.line(f"error: {args.model}: OpenVINO cannot run {layers}: not an "
                             f"OpenVINO opset; nothing to compare with"), file=sys.stderr)
        return 1
    compiled = compile_model(model)
    given = common.load_inputs(args.input, compiled, args.model)
    inputs = common.complete_inputs(model, given, args.seed)
    tolerances = Tolerances(args.tolerance, tuple(args.rtol), tuple(args.atol), ov is not None)
    try:
        results = compare(model, inputs, ov, args.weights, tolerances)
    except OracleError as e:
        print(printable.line(f"error: {args.model}: {e}"), file=sys.stderr)
        return 1
    source = "given" if not set(inputs) - set(given) else f"generated from seed {args.seed}"
    oracle = ("irexec's precise mode (float64, rounded once per layer)" if ov is None else
              f"OpenVINO {ov.get_version().split('-')[0]} (CPU, f32 precision)")
    print(f"irexec against {oracle}, inputs {source}, tolerances: {_describe_tolerances(args)}:")
    multi_port = {n.name for n in model.nodes if len(n.outputs) > 1}
    print("\n".join(report(results, multi_port)))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    summary = ", ".join(f"{c} {v}" for v, c in counts.items())
    print(f"{len(results)} layer output{'s' * (len(results) != 1)} compared: {summary}")
    first = next((r for r in results if not r.agrees), None)
    if first is None:
        return 0
    where = f"{model.path}:{first.node.line}" if first.node.line else str(model.path)
    size = f", max abs diff {_size(first)}" if _size(first) else ""
    size += f", max rel diff {_rel(first)}" if _rel(first) else ""
    size += f", {_ulps(first)} ulps" if _ulps(first) else ""
    print(printable.line(f"first diverging layer: '{first.node.name}' ({first.node.type}) at "
                         f"{where}: {first.differing} of {first.ours.size} elements differ{size}"
                         f"{'; ' + first.note if first.note else ''}"))
    sys.stdout.flush()
    return 1
