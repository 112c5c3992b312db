"""Compare a model layer by layer over a dataset: against OpenVINO's CPU plugin, or against a twin
model (an int8 or f16 model against its f32 original), in any place irexec/batch/ runs.

Each worker judges each sample as ``irexec compare`` judges one input (the same verdicts, from
``cli/compare.py``'s ``judge`` and the same tolerance inheritance along the graph), and sends back
a small summary per sample: for every layer output its largest absolute, relative and ULP error,
a histogram of the ULP errors of its elements, and whether it is beyond its tolerance; and the
first layer that departs. ``Report`` folds the summaries in sample order: per layer the worst
errors over the dataset, ULP percentiles, and how many samples exceed the tolerance.

The oracle is made once per worker: OpenVINO's compiled model (with an extra Result per layer
output), or the twin's compiled model, cached beside the job's own compiled model.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from dataclasses import dataclass, field

import numpy as np

from irexec import numerics
from irexec.cli import compare as single
from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError
from irexec.ir import element_type as et_table
from irexec.pickling import ModelSource

# ULP histogram buckets: 0, then (2**(k-1), 2**k] for k = 0 .. 62, then beyond (and infinity).
ULP_BUCKETS = 65
PERCENTILES = (50.0, 90.0, 99.0, 99.9)


def _ulp_histogram(ulps: np.ndarray) -> np.ndarray:
    counts = np.zeros(ULP_BUCKETS, np.int64)
    ulps = ulps.reshape(-1)
    zero = ulps == 0
    counts[0] = int(zero.sum())
    rest = ulps[~zero]
    if rest.size:
        finite = np.isfinite(rest)
        with np.errstate(divide="ignore"):
            k = np.ceil(np.log2(rest[finite])).astype(np.int64) + 1
        k = np.clip(k, 1, ULP_BUCKETS - 2)
        counts += np.bincount(k, minlength=ULP_BUCKETS)[:ULP_BUCKETS]
        counts[-1] += int((~finite).sum())
    return counts


def _bucket_top(k: int) -> float:
    """The largest ULP error bucket ``k`` holds."""
    if k == 0:
        return 0.0
    if k == ULP_BUCKETS - 1:
        return math.inf
    return float(2.0 ** (k - 1))


def percentile(counts: np.ndarray, p: float) -> float | None:
    """An upper bound of the ``p``-th percentile (a power of two) from a histogram."""
    total = int(counts.sum())
    if not total:
        return None
    rank = math.ceil(p / 100.0 * total)
    k = int(np.searchsorted(np.cumsum(counts), max(rank, 1)))
    return _bucket_top(k)


@dataclass
class LayerStat:
    """One layer output on one sample."""

    key: str  # layer name, ":port" added for a layer of several outputs
    type: str
    verdict: str
    max_abs: float | None = None
    max_rel: float | None = None
    max_ulps: float | None = None
    ulps: np.ndarray | None = field(default=None, repr=False)  # histogram, float layers only
    line: int | None = None


@dataclass
class SampleSummary:
    name: str = ""
    layers: list[LayerStat] = field(default_factory=list)
    first: LayerStat | None = None  # the first layer output beyond its tolerance

    @property
    def agrees(self) -> bool:
        return self.first is None


_oracles: dict = {}
_oracle_lock = threading.Lock()


@dataclass
class Comparison:
    """What the workers compare with: "openvino", or "against" a twin model."""

    oracle: str = "openvino"
    against: ModelSource | None = None
    tolerances: single.Tolerances = field(default_factory=single.Tolerances)

    def prepare(self) -> None:
        """Compile the twin now (in the parent, before workers are forked from it)."""
        if self.oracle == "against":
            self._twin()

    def _twin(self):
        """The twin, compiled once per process (kept apart from ModelSource's cache of one
        model, which holds the job's own model)."""
        from irexec.api import compile_model

        key = ("against", self.against.digest)
        with _oracle_lock:
            twin = _oracles.get(key)
        if twin is None:
            twin = compile_model(self.against.read())
            with _oracle_lock:
                _oracles.clear()
                _oracles[key] = twin
        return twin

    def _theirs(self, compiled, job, inputs, wanted):
        if self.oracle == "against":
            twin = self._twin()
            values = {}
            twin_inputs = {}
            for name, value in inputs.items():
                layer = twin.input_name(name)
                if layer is None:
                    raise IRError.make("IR601", f"the model compared against has no input "
                                                f"'{name}'", Location(self.against.path))
                twin_inputs[layer] = value
            twin(twin_inputs, variables={},
                 trace=lambda node, port, array: values.__setitem__((node.name, port), array))
            return values
        return _OpenVINO.for_job(job, wanted).run(inputs)

    def summarize(self, compiled, inputs, job) -> SampleSummary:
        computed: list = []
        compiled(inputs, variables={},
                 trace=lambda node, port, array: computed.append((node, port, array)))
        computed = [(n, p, a) for n, p, a in computed
                    if n.op is None or n.op.spec.role != "parameter"]
        theirs = self._theirs(compiled, job, inputs, [(n.name, p) for n, p, _ in computed])
        return judge_all(computed, theirs, self.tolerances,
                         other="OpenVINO" if self.oracle == "openvino" else "the other model")


def judge_all(computed, theirs, tolerances, other: str) -> SampleSummary:
    """Each computed layer output judged as cli/compare.py's ``compare`` judges it."""
    summary = SampleSummary()
    differing: dict = {}
    sizes: dict = {}
    multi = {id(n) for n, p, _ in computed if len(n.outputs) > 1}
    for node, port, array in computed:
        ours = np.asarray(array)
        ref = theirs.get((node.name, port))
        if ref is not None:
            ref = np.asarray(ref)
            if ref.dtype != ours.dtype and ref.shape == ours.shape and \
                    ours.dtype.kind == "f" and ref.dtype.kind == "f":
                ref = ref.astype(ours.dtype)  # a twin in another float type: in ours
        r = single.LayerResult(node, port, ours, ref)
        inherited = [differing[p.source] for p in node.inputs if p.source in differing]
        carried = [sizes[p.source] for p in node.inputs if p.source in sizes]
        size = max(abs(c) for c in carried) if carried else None
        single.judge(r, tolerances, inherited, -size if any(c < 0 for c in carried) else size)
        if r.verdict not in ("bit-exact", "equal") and r.tolerance is not None:
            differing[node.outputs[port]] = r.tolerance
            if r.max_abs is not None:
                sizes[node.outputs[port]] = r.max_abs if r.agrees else -r.max_abs
        verdict = f"not in {other}" if ref is None else r.verdict
        stat = LayerStat(f"{node.name}:{port}" if id(node) in multi else node.name, node.type,
                         verdict, r.max_abs, r.max_rel, r.max_ulps, line=node.line)
        if ref is not None and ref.shape == ours.shape and ref.dtype == ours.dtype:
            try:
                et = et_table.from_dtype(ours.dtype)
            except KeyError:
                et = None
            if et is not None and et.is_real:
                if r.verdict == "bit-exact":
                    stat.ulps = np.zeros(ULP_BUCKETS, np.int64)
                    stat.ulps[0] = ours.size
                    stat.max_abs = stat.max_rel = stat.max_ulps = 0.0
                else:
                    stat.ulps = _ulp_histogram(numerics.ulps(ours, ref, et))
        summary.layers.append(stat)
        if summary.first is None and verdict == "DIFFERS":
            summary.first = stat
    return summary


class _OpenVINO:
    """OpenVINO's CPU plugin with an extra Result per wanted layer output, compiled once per
    worker process and job."""

    def __init__(self, job, wanted):
        import openvino as ov

        self.ov = ov
        core = ov.Core()
        source = job.source
        try:
            if source.path and (source.xml is None or source.found_here()):
                ov_model = core.read_model(source.path, source.weights_path) \
                    if source.weights_path and os.path.exists(source.weights_path) \
                    else core.read_model(source.path)
            else:
                weights = ov.Tensor(np.frombuffer(source.weights or b"\0", np.uint8))
                ov_model = core.read_model(source.xml.decode("utf-8"), weights)
        except Exception as e:  # noqa: BLE001  (OpenVINO raises RuntimeError and its own)
            raise IRError.make("IR001", f"OpenVINO cannot read the model: "
                                        f"{single._first_line(e)}",  # noqa: SLF001
                               Location(source.path)) from None
        self.index = single.tap_openvino_outputs(ov_model, wanted)
        try:
            self.compiled = core.compile_model(ov_model, "CPU", single.OV_CONFIG)
        except Exception as e:  # noqa: BLE001
            raise IRError.make("IR001", f"OpenVINO cannot compile the model: "
                                        f"{single._first_line(e)}",  # noqa: SLF001
                               Location(source.path)) from None
        self.order = {p.get_friendly_name(): i for i, p in enumerate(ov_model.get_parameters())}

    @classmethod
    def for_job(cls, job, wanted) -> _OpenVINO:
        key = ("openvino", job.source.digest)
        with _oracle_lock:
            found = _oracles.get(key)
        if found is None:
            found = cls(job, wanted)
            with _oracle_lock:
                _oracles.clear()
                _oracles[key] = found
        return found

    def run(self, inputs) -> dict:
        ov = self.ov
        request = self.compiled.create_infer_request()
        try:
            request.infer({self.order[name]: single.openvino_tensor(ov, value)
                           for name, value in inputs.items()})
        except Exception as e:  # noqa: BLE001
            raise IRError.make("IR001", f"OpenVINO cannot run these inputs: "
                                        f"{single._first_line(e)}") from None  # noqa: SLF001
        return {key: single.from_openvino_tensor(ov, request.get_tensor(self.compiled.outputs[i]))
                for key, i in self.index.items()}


# --- folding the samples ----------------------------------------------------------------------

@dataclass
class LayerTotal:
    key: str
    type: str
    line: int | None = None
    samples: int = 0
    over: int = 0  # samples where it is beyond its tolerance
    first: int = 0  # samples where it is the first to depart
    missing: int = 0  # samples where the other side lacks it
    worst_abs: float | None = None
    worst_rel: float | None = None
    worst_ulps: float | None = None
    ulps: np.ndarray | None = field(default=None, repr=False)

    def add(self, stat: LayerStat, first: bool) -> None:
        self.samples += 1
        self.over += stat.verdict == "DIFFERS"
        self.first += first
        self.missing += stat.verdict.startswith("not in")
        for name in ("abs", "rel", "ulps"):
            value = getattr(stat, "max_" + name)
            if value is not None:
                old = getattr(self, "worst_" + name)
                setattr(self, "worst_" + name, value if old is None else max(old, value))
        if stat.ulps is not None:
            self.ulps = stat.ulps.copy() if self.ulps is None else self.ulps + stat.ulps

    def percentiles(self) -> dict[str, float | None]:
        if self.ulps is None:
            return {}
        return {f"p{p:g}": percentile(self.ulps, p) for p in PERCENTILES}


class Report:
    """The summaries of a dataset, folded in sample order."""

    def __init__(self):
        self.layers: dict[str, LayerTotal] = {}
        self.samples: list[dict] = []

    def add(self, name: str, summary: SampleSummary | None, errors=None) -> None:
        if summary is None:
            self.samples.append({"sample": name, "error": [str(d) for d in errors or []]})
            return
        for stat in summary.layers:
            total = self.layers.get(stat.key)
            if total is None:
                total = self.layers[stat.key] = LayerTotal(stat.key, stat.type, stat.line)
            total.add(stat, stat is summary.first)
        first = summary.first
        self.samples.append({"sample": name, "first_departing": None if first is None else {
            "layer": first.key, "type": first.type, "max_abs": first.max_abs,
            "max_rel": first.max_rel, "max_ulps": first.max_ulps}})

    @property
    def agrees(self) -> bool:
        return all(s.get("first_departing") is None and "error" not in s for s in self.samples)

    def as_json(self, header: dict) -> dict:
        return {**header, "samples": self.samples, "layers": [
            {"layer": t.key, "type": t.type, "line": t.line, "samples": t.samples,
             "samples_over_tolerance": t.over, "first_departing_in": t.first,
             "missing_in_other": t.missing, "worst_abs": _plain(t.worst_abs),
             "worst_rel": _plain(t.worst_rel), "worst_ulps": _plain(t.worst_ulps),
             "ulps": {k: _plain(v) for k, v in t.percentiles().items()}}
            for t in self.layers.values()]}


def _plain(value):
    """A float for JSON (infinity as a string, which JSON lacks)."""
    if value is None:
        return None
    return value if math.isfinite(value) else str(value)


def compare(model, samples, client=None, jobs: int | None = None, *, with_: str = "openvino",
            against=None, seed: int = 0, tolerances: single.Tolerances | None = None,
            memory_budget: int | None = None, image=None):
    """Yield (sample name, SampleSummary) in sample order. ``against``: the twin model (a path, a
    Model or a CompiledModel) to compare with instead of OpenVINO. IRError raised at a sample
    that could not be compared."""
    from irexec.batch.datasets import ImageOptions
    from irexec.batch.runner import Place, compiled_and_source, in_order, samples_of
    from irexec.batch.work import Job

    from irexec import budget
    from irexec.runtime.compiled_model import CompiledModel

    with budget.limit(memory_budget) if memory_budget is not None else contextlib.nullcontext():
        compiled, source = compiled_and_source(model)
    comparison = comparison_for(with_, against, tolerances)
    job = Job(source, None, seed, memory_budget, image or ImageOptions(), comparison)
    listed = samples_of(samples)
    # A CompiledModel given with a budget was compiled without it: the workers compile anew.
    within = memory_budget is None or not isinstance(model, CompiledModel)
    for index, outcome in in_order(Place(jobs, client).outcomes(job, listed,
                                                                compiled if within else None)):
        if not outcome.ok:
            raise IRError(outcome.errors)
        outcome.summary.name = listed[index].name
        yield listed[index].name, outcome.summary


def comparison_for(with_: str, against, tolerances=None) -> Comparison:
    if against is not None:
        from irexec.batch.runner import compiled_and_source

        # read and compiled here first: a missing or broken file is one clear error now,
        # not in every worker
        source = compiled_and_source(against)[1]
        return Comparison("against", source,
                          tolerances or single.Tolerances(against_openvino=False))
    if with_ != "openvino":
        raise ValueError(f"compare with 'openvino' or against a model, not {with_!r}")
    if single._openvino() is None:  # noqa: SLF001
        raise IRError.make("IR001", single.INSTALL_OPENVINO)
    return Comparison("openvino", None, tolerances or single.Tolerances())
