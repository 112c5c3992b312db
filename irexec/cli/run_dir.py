"""``irexec run MODEL --input-dir D``: the model over a dataset, one line per sample, a thin shell
over irexec/batch/ (which reads the samples, runs them here, in worker processes or on a Dask
cluster, and hands the outcomes back in sample order). Output files are written here, each whole,
in sample order, so ``--fail-fast`` leaves exactly the files of the samples before the bad one.
"""

from __future__ import annotations

import argparse
import os
import sys

from irexec.batch import dask_runner, sink
from irexec.batch.datasets import ImageOptions, batch_samples, folder_samples
from irexec.batch.runner import Place, in_order
from irexec.batch.work import Job, cores
from irexec.cli import common
from irexec.cli.progress import Progress
from irexec.cli.usage import UsageError
from irexec.diagnostics import printable
from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError
from irexec.pickling import ModelSource


def add_dataset_arguments(p) -> None:
    """What a command over a dataset takes: where the samples are, how images become inputs,
    and where the work runs."""
    p.add_argument("--batch-axis", type=int, metavar="N",
                   help="with --input-dir FILE (one .npy or .npz): the samples lie along axis N "
                        "of its arrays (default 0)")
    p.add_argument("--layout", choices=("NCHW", "NHWC"), type=str.upper,
                   help="with a folder of images: the input's layout (default: from the model's "
                        "rt_info, else from which axis has 1, 3 or 4 channels)")
    p.add_argument("--mean", type=_floats, metavar="M[,M...]",
                   help="with images: subtracted from each channel's pixel values (0-255)")
    p.add_argument("--scale", type=_floats, metavar="S[,S...]",
                   help="with images: each channel divided by it, after --mean")
    add_place_arguments(p)


def add_place_arguments(p) -> None:
    p.add_argument("--jobs", "-j", type=_positive, metavar="N",
                   help=f"with --input-dir: N worker processes on this machine (default: one per "
                        f"core, here {cores()}; 1 runs in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"with --input-dir: run on the Dask cluster whose scheduler is at ADDRESS "
                        f"(tcp://host:8786; 'local' starts one on this machine with --jobs "
                        f"workers); default ${dask_runner.ENV} unless --jobs is given; needs "
                        f"irexec[dask]")


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a number or a comma-separated "
                                         f"list of numbers") from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a whole number of 1 or more")
    return value


def scheduler_of(args) -> str | None:
    """--scheduler, else $IREXEC_SCHEDULER unless --jobs asks for local workers."""
    if args.scheduler:
        return args.scheduler
    return None if args.jobs is not None else os.environ.get(dask_runner.ENV) or None


def check_usage(args) -> None:
    """Usage errors of the dataset options, before anything runs."""
    dataset = getattr(args, "input_dir", None) is not None
    for option in ("jobs", "scheduler", "batch_axis", "layout", "mean", "scale"):
        if getattr(args, option, None) is not None and not dataset:
            raise UsageError(f"argument --{option.replace('_', '-')}: needs --input-dir")
    if getattr(args, "resume", False) and not getattr(args, "output_dir", None):
        raise UsageError("argument --resume: needs --output-dir (the files it looks for)")
    if getattr(args, "trace", None) and (args.scheduler or (args.jobs or 1) > 1):
        raise UsageError("argument --trace: with --input-dir, traces are written by one process "
                         "here; leave out --jobs and --scheduler")


def samples(args):
    if os.path.isfile(args.input_dir):
        return batch_samples(args.input_dir, args.batch_axis or 0), \
            f"{args.input_dir} along axis {args.batch_axis or 0}"
    if args.batch_axis is not None:
        raise UsageError("argument --batch-axis: --input-dir names a folder; --batch-axis is for "
                         "one .npy or .npz file holding many samples")
    return folder_samples(args.input_dir), args.input_dir


def place(args) -> Place:
    address = scheduler_of(args)
    jobs = args.jobs if args.jobs is not None else (1 if getattr(args, "trace", None) else None)
    return Place(jobs, address=address)


def job(args, model, compiled, comparison=None) -> Job:
    """The recipe the workers get: the model's files by path and digest (with their bytes for a
    cluster, dropped where the workers share the files)."""
    config = common.compile_config(args)
    reshaped = bool(getattr(args, "shape", None))  # --shape: the workers get the reshaped model
    if model.path and str(model.path).lower().endswith(".xml") and not reshaped:
        source = ModelSource.of_file(model.path, getattr(args, "weights", None),
                                     with_bytes=scheduler_of(args) is not None)
    else:
        source = ModelSource.of_model(model)
    image = ImageOptions(args.layout, args.mean or (), args.scale or ())
    protected = None
    if getattr(args, "trace", None):
        protected = common.protected_files(args)
    return Job(source, config, args.seed, getattr(args, "memory_budget", None), image,
               comparison, getattr(args, "trace", None), getattr(args, "trace_bodies", False),
               protected or ())


def execute(args, model, compiled, checksum, output_guard) -> int:
    """Run every sample; print one line per sample (the CRC-32 of each output) in order."""
    listed, where = samples(args)
    names = compiled.output_names()
    done_before = set()
    if args.output_dir:
        try:
            os.makedirs(args.output_dir, exist_ok=True)
        except OSError as e:
            raise IRError.make("IR001", f"cannot create '{args.output_dir}': {e.strerror or e}",
                               Location(args.output_dir)) from None
        if args.resume:
            done_before = {i for i, s in enumerate(listed)
                           if sink.is_whole(sink.output_path(args.output_dir, s.stem), names)}
    todo = [s for i, s in enumerate(listed) if i not in done_before]
    position = [i for i in range(len(listed)) if i not in done_before]
    width = max(len("file"), *(len(printable.line(s.name)) for s in listed))
    header = "  ".join(["file".ljust(width), *(printable.line(n).ljust(8) for n in names)])
    runner = place(args)
    failed: list[str] = []
    with runner:
        print(f"crc32 of each output, one line per sample of {where} ({len(listed)}, in sorted "
              f"order; {runner.describe()}):")
        print("  " + header.rstrip(), flush=True)

        def line(sample, cells):
            return "  " + "  ".join([printable.line(sample.name).ljust(width), *cells]).rstrip()

        with Progress(len(todo)) as progress:
            shown = 0

            def show_kept(upto: int):
                nonlocal shown
                while shown < upto:
                    if shown in done_before:
                        progress.print(line(listed[shown], ["kept (--resume)"]))
                    shown += 1

            for k, outcome in in_order(runner.outcomes(job(args, model, compiled), todo,
                                                       compiled)):
                index = position[k]
                sample = listed[index]
                show_kept(index)
                if outcome.ok:
                    if args.output_dir:
                        output_guard(sink.output_path(args.output_dir, sample.stem),
                                     outcome.outputs)
                    cells = [checksum(outcome.outputs[n]).ljust(max(8, len(n))) for n in names]
                else:
                    if args.fail_fast:
                        raise IRError(outcome.errors)
                    failed.append(printable.line(sample.name))
                    for d in outcome.errors:
                        progress.print(f"error: {d}", file=sys.stderr)
                    cells = ["failed"]
                progress.label = sample.name
                progress.print(line(sample, cells))
                shown = index + 1
                progress.advance()
            show_kept(len(listed))
    done = f"ran {len(todo)} file{'s' * (len(todo) != 1)}"
    if done_before:
        done += f"; {len(done_before)} kept from before (--resume)"
    if failed:
        done += (f"; {len(failed)} failed ({', '.join(failed[:5])}"
                 f"{', ...' * (len(failed) > 5)}; errors on stderr)")
    if args.output_dir:
        done += f"; outputs saved in {args.output_dir}"
    if args.trace:
        done += f"; traces in {args.trace}"
    print(done)
    sys.stdout.flush()
    return 1 if failed else 0


__all__ = ["add_dataset_arguments", "check_usage", "execute"]
