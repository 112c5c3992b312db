"""Run or compare a model over many samples: here, in a pool of worker processes, or on a Dask
cluster. The command line's ``--input-dir``, ``--jobs`` and ``--scheduler`` stand on this.

    import irexec.batch
    for results in irexec.batch.run("model.xml", samples, jobs=2):   # in sample order
        print(results[0])

``samples``: a folder (of .npz/.npy files or images), or a list whose items are each a dict
{input name: array}, a list of arrays in Parameter order, or one array (a model of one input).
``client``: a ``distributed.Client`` (the work goes to its cluster); else ``jobs`` worker
processes here (default: one per core; 1 runs in this process). Dask is imported only when a
client or scheduler is given.

Layout: ``datasets`` (samples from folders and files), ``work`` (a job and what a worker does
with one sample), ``pool`` (local worker processes), ``dask_runner`` (Dask), ``runner`` (where to
run; outcomes in order), ``sink`` (output files), ``comparison`` (dataset comparison).
"""

from __future__ import annotations

from contextlib import nullcontext

from irexec import budget
from irexec.batch.datasets import ImageOptions, Sample
from irexec.batch.runner import Place, compiled_and_source, in_order, samples_of
from irexec.batch.work import Job
from irexec.errors import IRError


def run(model, samples, client=None, jobs: int | None = None, *, seed: int = 0,
        config: dict | None = None, memory_budget: int | None = None,
        image: ImageOptions | None = None):
    """Yield each sample's results (OpenVINO's results object: by output name, index or port)
    in sample order. A sample that fails raises its IRError when its turn comes."""
    from irexec.runtime.compiled_model import CompiledModel

    with budget.limit(memory_budget) if memory_budget is not None else nullcontext():
        compiled, source = compiled_and_source(model, config)
    if config is None and compiled.precision != "f32":
        config = {"precision": compiled.precision}
    job = Job(source, config, seed, memory_budget, image or ImageOptions())
    listed = samples_of(samples)
    place = Place(jobs, client)
    # A CompiledModel given with a budget was compiled without it: the workers compile anew.
    within = memory_budget is None or not isinstance(model, CompiledModel)
    for _, outcome in in_order(place.outcomes(job, listed, compiled if within else None)):
        if not outcome.ok:
            raise IRError(outcome.errors)
        yield compiled.results_of(outcome.outputs)


def compare(model, samples, client=None, jobs: int | None = None, **options):
    """Yield each sample's comparison (``irexec.batch.comparison.SampleSummary``: per layer output
    its errors and whether it is within tolerance, and the first layer that departs) in sample
    order. ``options``: see :func:`irexec.batch.comparison.compare`."""
    from irexec.batch.comparison import compare as _compare

    yield from _compare(model, samples, client=client, jobs=jobs, **options)


__all__ = ["ImageOptions", "Job", "Place", "Sample", "compare", "in_order", "run"]
