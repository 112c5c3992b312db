"""``irexec compare MODEL --input-dir D [--against OTHER.xml]``: the layer-by-layer comparison of
``irexec compare`` over a dataset, a thin shell over irexec/batch/comparison.py. Without
``--input-dir`` the command is ``cli/compare.py``'s, unchanged.

Prints per layer output (in model order) how many samples exceed its tolerance, in how many it is
the first layer to depart, its worst absolute and relative error over the dataset and its ULP
error percentiles; then each departing sample with its first departing layer. ``--report``
writes the same as JSON (every sample listed), ``--plot`` a PNG of the errors per layer.
"""

from __future__ import annotations

import json
import sys

from irexec.api import check_runnable, compile_model
from irexec.batch.comparison import Comparison, Report, comparison_for
from irexec.batch.datasets import Sample
from irexec.batch.runner import in_order
from irexec.cli import common, compare, run_dir
from irexec.cli.columns import aligned
from irexec.cli.progress import Progress
from irexec.cli.usage import UsageError
from irexec.diagnostics import printable
from irexec.errors import IRError

INSTALL_MATPLOTLIB = ("--plot needs matplotlib, which is not installed here; install it with: "
                      "pip install matplotlib (in a clone of irexec: pip install '.[plot]')")
DATASET_ONLY = ("report", "plot", "fail_fast", "resume")


def add_parser(sub) -> None:
    compare.add_parser(sub)
    p = sub.choices["compare"]
    p.add_argument("--input-dir", metavar="DIR",
                   help="compare over a dataset: a folder of .npz/.npy files or images, or one "
                        ".npy/.npz file along --batch-axis (as irexec run --input-dir)")
    p.add_argument("--against", metavar="OTHER.xml",
                   help="compare with another IR of the same model (an int8 or f16 twin of an "
                        "f32 original) instead of OpenVINO, on --input/--seed or --input-dir; "
                        "layers matched by name")
    p.add_argument("--report", metavar="FILE.json",
                   help="with --input-dir: write the per-layer and per-sample results as JSON")
    p.add_argument("--plot", metavar="FILE.png",
                   help="with --input-dir: draw each layer's errors in model order (needs "
                        "matplotlib)")
    p.add_argument("--fail-fast", action="store_true",
                   help="with --input-dir: stop at the first sample that cannot be compared")
    run_dir.add_dataset_arguments(p)


def execute(args) -> int:
    if args.input_dir is None and not args.against:
        for option in DATASET_ONLY:
            if getattr(args, option, None):
                raise UsageError(f"argument --{option.replace('_', '-')}: needs --input-dir")
        run_dir.check_usage(args)
        return compare.execute(args)
    if args.input and args.input_dir is not None:
        raise UsageError("argument --input-dir: give inputs with --input or --input-dir, not "
                         "both")
    if args.precise:
        raise UsageError("argument --precise: compares one input; over a dataset, compare with "
                         "OpenVINO or --against a model")
    run_dir.check_usage(args)
    for option, path in (("--report", args.report), ("--plot", args.plot)):
        if path:
            common.check_output(option, path, args)
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(f"error: {INSTALL_MATPLOTLIB}", file=sys.stderr)
            return 1
    model = common.load_model(args, runs=True)
    check_runnable(model)
    tolerances = compare.Tolerances(args.tolerance, tuple(args.rtol), tuple(args.atol),
                                    args.against is None)
    try:
        comparison = comparison_for("openvino", args.against, tolerances)
    except IRError as e:
        if args.against is None:  # OpenVINO missing: the single-input command's line
            print(f"error: {e.diagnostics[0].message}", file=sys.stderr)
            return 1
        raise
    compiled = compile_model(model)
    if args.input_dir is None:  # --against on one input: --input files and --seed
        given = common.load_inputs(args.input, compiled, args.model)
        inputs = common.complete_inputs(model, given, args.seed)
        source = "given" if not set(inputs) - set(given) else f"generated from seed {args.seed}"
        listed, where = [Sample("inputs", "inputs", "arrays", None, inputs)], f"inputs {source}"
    else:
        listed, where = run_dir.samples(args)
    runner = run_dir.place(args)
    report = Report()
    with runner, Progress(len(listed)) as progress:
        oracle = _oracle(comparison, args)
        print(f"irexec against {oracle}, per layer over {len(listed)} sample{'s' * (len(listed) != 1)} of {where} (in "
              f"sorted order; {runner.describe()}), tolerances: "
              f"{compare._describe_tolerances(args)}:")  # noqa: SLF001
        for index, outcome in in_order(runner.outcomes(run_dir.job(args, model, compiled,
                                                                   comparison), listed, compiled)):
            sample = listed[index]
            progress.label = sample.name
            if outcome.ok:
                report.add(sample.name, outcome.summary)
            else:
                if args.fail_fast:
                    raise IRError(outcome.errors)
                for d in outcome.errors:
                    progress.print(f"error: {d}", file=sys.stderr)
                report.add(sample.name, None, outcome.errors)
            progress.advance()
    for line in table(report):
        print(printable.line(line))
    departing = [s for s in report.samples if s.get("first_departing")]
    failed = [s for s in report.samples if "error" in s]
    for s in departing:
        f = s["first_departing"]
        print(printable.line(f"{s['sample']}: first departing layer '{f['layer']}' ({f['type']})"
                             f"{_sizes(f)}"))
    print(f"{len(listed) - len(departing) - len(failed)} of {len(listed)} samples agree"
          f"{f'; {len(departing)} depart' if departing else ''}"
          f"{f'; {len(failed)} could not be compared (errors on stderr)' if failed else ''}")
    header = {"model": str(model.path), "oracle": oracle, "dataset": str(args.input_dir or where)}
    if args.report:
        text = json.dumps(report.as_json(header), indent=1).encode("utf-8")
        common.write_output("--report", args.report, lambda f: f.write(text), args)
        print(f"report written to {args.report}")
    if args.plot:
        plot(report, args.plot, oracle, args)
        print(f"plot written to {args.plot}")
    sys.stdout.flush()
    return 0 if report.agrees else 1


def _oracle(comparison: Comparison, args) -> str:
    if comparison.oracle == "against":
        return f"{args.against}"
    import openvino as ov

    return f"OpenVINO {ov.get_version().split('-')[0]} (CPU, f32 precision)"


def _number(value, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def _sizes(f: dict) -> str:
    parts = [f"{name} {_number(f[key], 6 if name == 'max abs' else 3)}"
             for name, key in (("max abs", "max_abs"), ("max rel", "max_rel"),
                               ("ulps", "max_ulps")) if f.get(key) is not None]
    return ": " + ", ".join(parts) if parts else ""


def table(report: Report) -> list[str]:
    rows = [("layer", "type", "over tolerance", "first in", "worst abs", "worst rel",
             "ulps p50", "p99", "max")]
    for t in report.layers.values():
        p = t.percentiles()
        rows.append((t.key, t.type, f"{t.over} of {t.samples}" if t.over else "",
                     str(t.first) if t.first else "", _number(t.worst_abs, 6),
                     _number(t.worst_rel), _number(p.get("p50")), _number(p.get("p99")),
                     _number(t.worst_ulps)))
    return aligned(rows)


def plot(report: Report, path: str, oracle: str, args) -> None:
    """Worst relative error and ULP p99 per layer, in model order, on log scales."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    layers = list(report.layers.values())
    x = range(len(layers))
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, len(layers) * 0.12), 6),
                                         sharex=True)
    rel = [t.worst_rel or 0.0 for t in layers]
    p99 = [t.percentiles().get("p99") or 0.0 for t in layers]
    top.plot(x, [max(v, 1e-12) for v in rel], marker=".", linewidth=0.8)
    top.set_yscale("log")
    top.set_ylabel("worst relative error")
    top.set_title(f"irexec against {oracle}")
    bottom.plot(x, [max(v, 0.5) if v != float("inf") else 2.0 ** 64 for v in p99], marker=".",
                linewidth=0.8, color="tab:orange")
    bottom.set_yscale("log", base=2)
    bottom.set_ylabel("ULP error, 99th percentile")
    bottom.set_xlabel("layer (model order)")
    over = [i for i, t in enumerate(layers) if t.over]
    for axis in (top, bottom):
        for i in over:
            axis.axvline(i, color="tab:red", alpha=0.15, linewidth=1)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    common.write_output("--plot", path, lambda f: f.write(buffer.getvalue()), args)
