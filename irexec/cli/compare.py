"""``irexec compare MODEL [--with openvino]``: run a model in irexec and in OpenVINO on the same
inputs and compare every layer's outputs, naming the first layer that diverges.

OpenVINO's intermediate tensors are not outputs of its compiled model, so the OpenVINO model gets
one extra Result per output port of every layer irexec computes; layers are matched by name (the
IR's layer name is OpenVINO's friendly name). OpenVINO's CPU plugin runs with
``INFERENCE_PRECISION_HINT=f32`` so that a host preferring bf16 does not lower f32 layers.

Layers that only move data (their outputs are copies of input elements) must agree bit for bit
whatever the tolerances; other layers agree when equal (NaN with NaN, -0.0 with 0.0), or within
``--rtol``/``--atol`` (both 0 by default, so by default every value must be equal). OpenVINO is
an optional oracle: when it is missing, the command says how to install it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from irexec.api import compile_model, read_model
from irexec.cli.columns import aligned
from irexec.cli.run import _load_inputs, _seed, _type_name
from irexec.cli.usage import UsageError
from irexec.io import bin_layout
from irexec.ir import element_type as et_table
from irexec.ir.model import Model, Node
from irexec.runtime.inputs import make_inputs

OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
INSTALL_OPENVINO = ("irexec compare --with openvino needs OpenVINO, which is not installed here; "
                    "install it with: pip install openvino (or pip install 'irexec[oracle]')")


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="compare every layer's outputs with OpenVINO",
                       description="Run the model in irexec and in OpenVINO on the same inputs "
                                   "and report, layer by layer, whether the outputs agree, the "
                                   "first layer that diverges and by how much. Exit 0 when all "
                                   "agree, 1 when a layer differs or the comparison cannot run.")
    p.add_argument("model", help="the model's .xml file")
    p.add_argument("--weights", metavar="BIN", help="the .bin file (default: beside the .xml)")
    p.add_argument("--with", dest="oracle", choices=("openvino",), default="openvino",
                   help="the runtime to compare with (default: openvino)")
    p.add_argument("--input", "-i", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input value from a .npy file (repeatable); others are generated")
    p.add_argument("--seed", type=_seed, default=0, help="seed for generated inputs (default 0)")
    p.add_argument("--rtol", type=_tolerance, default=0.0,
                   help="relative tolerance for layers that compute (default 0)")
    p.add_argument("--atol", type=_tolerance, default=0.0,
                   help="absolute tolerance for layers that compute (default 0)")


def _tolerance(text: str) -> float:
    value = float(text)  # argparse turns ValueError into a usage error
    if not value >= 0 or value == float("inf"):
        raise ValueError(text)
    return value


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

    @property
    def agrees(self) -> bool:
        return self.verdict != "DIFFERS"


def _describe(array: np.ndarray) -> str:
    return f"{_type_name(array)} [{','.join(map(str, array.shape))}]"


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a if a.dtype == np.bool_ else a.view(f"u{a.dtype.itemsize}")


def judge(r: LayerResult, rtol: float, atol: float) -> None:
    """Fill in the verdict and the size of the difference of one layer output."""
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
        diff = np.where(same, 0.0, np.abs(x - y))
        finite = diff[np.isfinite(diff)]
        r.max_abs = float(finite.max()) if finite.size else float("inf")
        r.differing = int((~same).sum())
        if r.differing == 0:
            r.verdict = "equal"  # -0.0 against 0.0, or NaNs of different payloads
            r.note = "same values, different bits"
        elif np.all(same | np.isclose(x, y, rtol=rtol, atol=atol)):
            r.verdict = "close"
        else:
            r.verdict = "DIFFERS"
        if r.node.op is not None and r.node.op.spec.exact and r.verdict != "DIFFERS":
            r.verdict, r.note = "DIFFERS", "data movement must be bit-exact"
            r.differing = int((_bits(a) != _bits(b)).sum())
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


def run_openvino(ov, model: Model, weights, inputs: dict[str, np.ndarray],
                 wanted: list[tuple[str, int]]) -> dict[tuple[str, int], np.ndarray]:
    """OpenVINO's value of each (layer name, port) in ``wanted`` that its graph has."""
    import openvino.opset1 as ops

    core = ov.Core()
    try:
        ov_model = core.read_model(model.path, weights) if weights else core.read_model(model.path)
    except Exception as e:  # OpenVINO raises RuntimeError and its own types
        raise OracleError(f"OpenVINO cannot read the model: {_first_line(e)}") from None
    by_name = {op.get_friendly_name(): op for op in ov_model.get_ordered_ops()}
    index: dict[tuple[str, int], int] = {}
    for name, port in wanted:
        op = by_name.get(name)
        if op is None or port >= op.get_output_size():
            continue
        result = ops.result(op.output(port))
        result.set_friendly_name(f"irexec_compare/{name}/{port}")
        ov_model.add_results([result])
        index[(name, port)] = ov_model.get_result_index(result)
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


def openvino_tensor(ov, value: np.ndarray):
    """An OpenVINO tensor holding ``value`` bit for bit. OpenVINO keeps tensors in the .bin
    layout (narrow types packed), and its Python API would convert ml_dtypes arrays by value
    (bf16 through float16) or refuse them: every type but numpy's own goes in as bytes."""
    et = et_table.from_dtype(value.dtype)
    if et.kind == "string":
        return ov.Tensor(np.asarray(value, dtype=str))
    if value.dtype.type.__module__ == "numpy" and value.dtype.names is None:
        return np.ascontiguousarray(value)
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
    raw = np.asarray(tensor.data).view(np.uint8).tobytes()
    return bin_layout.decode(et, raw, 0, len(raw), shape).copy()


def compare(model: Model, inputs: dict[str, np.ndarray], ov, weights=None, rtol=0.0,
            atol=0.0) -> list[LayerResult]:
    """Every computed layer output of irexec against OpenVINO's, in irexec's run order."""
    compiled = compile_model(model)
    ours: list[tuple[Node, int, np.ndarray]] = []
    compiled(inputs, trace=lambda node, port, array: ours.append((node, port, array)))
    computed = [(n, p, a) for n, p, a in ours if n.type != "Parameter"]
    theirs = run_openvino(ov, model, weights, inputs, [(n.name, p) for n, p, _ in computed])
    results = []
    for node, port, array in computed:
        r = LayerResult(node, port, np.asarray(array), theirs.get((node.name, port)))
        judge(r, rtol, atol)
        results.append(r)
    return results


def _not_openvino_layers(model: Model) -> list[Node]:
    return [n for n in model.nodes if not n.version.startswith("opset")]


def _size(r: LayerResult) -> str:
    if r.verdict in ("bit-exact", "not in OpenVINO") or r.max_abs is None:
        return ""
    return f"{r.max_abs:.6g}"


def report(results: list[LayerResult], multi_port: set[str]) -> list[str]:
    rows = [("layer", "type", "output", "result", "max abs diff", "differing", "note")]
    for r in results:
        name = f"{r.node.name}:{r.port}" if r.node.name in multi_port else r.node.name
        rows.append((name, r.node.type, _describe(r.ours), r.verdict, _size(r),
                     f"{r.differing} of {r.ours.size}" if r.differing else "", r.note))
    return aligned(rows)


def execute(args) -> int:
    from irexec.cli.common import print_warnings

    model = read_model(args.model, args.weights)
    print_warnings(model.diagnostics)
    if model.path is None or not str(model.path).lower().endswith(".xml"):
        raise UsageError("irexec compare takes an IR .xml file (convert an ONNX model with "
                         "irexec convert first)")
    ov = _openvino()
    if ov is None:
        print(f"error: {INSTALL_OPENVINO}", file=sys.stderr)
        return 1
    refused = [(n, n.op.openvino_refuses(n)) for n in model.nodes
               if n.op is not None and n.op.openvino_refuses is not None]
    refused = [(n, why) for n, why in refused if why]
    if refused:
        node, why = refused[0]
        print(f"error: {args.model}: layer '{node.name}' ({node.type}): {why}; nothing to "
              f"compare with", file=sys.stderr)
        return 1
    foreign = _not_openvino_layers(model)
    if foreign:
        layers = ", ".join(f"'{n.name}' ({n.type}-{n.version})" for n in foreign[:3])
        print(f"error: {args.model}: OpenVINO cannot run {layers}: not an OpenVINO opset; "
              f"nothing to compare with", file=sys.stderr)
        return 1
    compiled = compile_model(model)
    given = _load_inputs(args.input, compiled, args.model)
    inputs = {**given, **make_inputs(model, given, args.seed)}
    try:
        results = compare(model, inputs, ov, args.weights, args.rtol, args.atol)
    except OracleError as e:
        print(f"error: {args.model}: {e}", file=sys.stderr)
        return 1
    source = "given" if not set(inputs) - set(given) else f"generated from seed {args.seed}"
    print(f"irexec against OpenVINO {ov.get_version().split('-')[0]} (CPU, f32 precision), "
          f"inputs {source}, rtol {args.rtol:g}, atol {args.atol:g}:")
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
    print(f"first diverging layer: '{first.node.name}' ({first.node.type}) at {where}: "
          f"{first.differing} of {first.ours.size} elements differ{size}"
          f"{'; ' + first.note if first.note else ''}")
    sys.stdout.flush()
    return 1
