"""``irexec run MODEL``: run a model on given or generated inputs and show the outputs."""

from __future__ import annotations

import os
import stat
import sys
import zlib

import numpy as np

from irexec import budget
from irexec.api import compile_model
from irexec.batch.sink import write_npz
from irexec.cli import common, describe, interruptible, run_dir
from irexec.cli.usage import UsageError
from irexec.diagnostics import printable
from irexec.io import safe_write
from irexec.io.arrays import string_bytes
from irexec.runtime.trace import DirectoryTrace

SHOWN_VALUES = 6


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run a model and print its outputs",
                       description="Run an IR model with numpy. Inputs not given with --input are "
                                   "generated from --seed, valid for the layers that read them.")
    common.add_model_arguments(p)
    common.add_input_arguments(p)
    common.add_shape_argument(p)
    p.add_argument("--output", "-o", metavar="OUT.npz",
                   help="also save the outputs to this .npz file, keyed by output name")
    p.add_argument("--trace", metavar="DIR",
                   help="also save every layer's outputs in DIR as .npy files named by layer, "
                        "listed in DIR/index.json (with --input-dir: DIR/<file>/)")
    p.add_argument("--trace-bodies", action="store_true",
                   help="with --trace: also the layers inside TensorIterator, Loop and If "
                        "bodies, once per iteration, named <layer>/<body>/<iteration>/<layer>")
    p.add_argument("--input-dir", metavar="DIR",
                   help="run once per sample and print one line per sample, in sorted order: "
                        "DIR holds .npz files (arrays keyed by input name; inputs a file lacks "
                        "are generated from --seed), .npy files (a model of one input) or "
                        "images (PNG/JPEG, needs irexec[image]); or DIR is one .npy/.npz file "
                        "of many samples along --batch-axis")
    p.add_argument("--output-dir", metavar="OUT",
                   help="with --input-dir: save each sample's outputs as OUT/<file>.npz, each "
                        "file whole or not at all")
    p.add_argument("--resume", action="store_true",
                   help="with --output-dir: skip the samples whose output file is already "
                        "there and whole (after an interrupted run)")
    p.add_argument("--fail-fast", action="store_true",
                   help="with --input-dir: stop at the first file that fails (default: report "
                        "it, go on with the others, exit 1 at the end)")
    run_dir.add_dataset_arguments(p)
    p.add_argument("--precise", action="store_true",
                   help="compute every float layer in float64, rounding once to its output "
                        f"type ({common.doc('numerics.md')})")
    common.add_memory_budget_argument(p)
    common.add_decompression_argument(p)


def _is_stream(path: str) -> bool:
    """A FIFO or a character device (/dev/null, /dev/stdout): written into, whatever its name."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _check_outputs(args) -> None:
    """Refuse, before anything runs, an output that cannot be written or would overwrite the
    run's own inputs: the model's .xml or .bin, an --input file, or (with --output-dir) the
    --input-dir files."""
    if args.output:
        common.check_output("--output", args.output, args)
        if not args.output.lower().endswith(".npz") and not _is_stream(args.output):
            raise UsageError(f"argument --output: '{args.output}': irexec saves the outputs as "
                             f"an .npz archive (one array per output); give a name ending in "
                             f".npz")
    if args.output_dir and args.input_dir and \
            safe_write.same_file(args.output_dir, args.input_dir):
        raise UsageError("argument --output-dir: it is the --input-dir, whose files the outputs "
                         "would overwrite; choose another folder")


def checksum(array: np.ndarray) -> str:
    """CRC-32 of the array's bytes in C order: equal arrays give equal checksums. Strings (object
    arrays of str) have no bytes of their own: each element, in C order, adds its UTF-8 length as
    4 little-endian bytes and then its UTF-8."""
    if array.dtype.kind == "O":
        crc = 0
        for value in array.reshape(-1).tolist():
            data = string_bytes(value)  # never fails (irexec/io/arrays.py)
            crc = zlib.crc32(data, zlib.crc32(len(data).to_bytes(4, "little"), crc))
        return f"{crc:08x}"
    return f"{zlib.crc32(np.ascontiguousarray(array).tobytes()):08x}"


def table(rows: dict[str, np.ndarray]) -> list[str]:
    header = ("name", "type", "shape", "crc32", "values")
    cells = [(printable.line(name), common.type_name(a), str(list(a.shape)).replace(" ", ""),
              checksum(a), describe.preview(a, SHOWN_VALUES)) for name, a in rows.items()]
    widths = [max(len(r[i]) for r in [header, *cells]) for i in range(4)]
    return ["  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4]
            for row in [header, *cells]]


def save_npz(path: str, arrays: dict[str, np.ndarray], args, option="--output") -> None:
    """Write the outputs through the one writer: atomically, never over the run's inputs."""
    common.write_output(option, path, lambda f: write_npz(f, arrays), args)


def _check_usage(args) -> None:
    if args.trace_bodies and not args.trace:
        raise UsageError("argument --trace-bodies: needs --trace DIR")
    run_dir.check_usage(args)
    if args.input_dir is None:
        if args.output_dir is not None:
            raise UsageError("argument --output-dir: needs --input-dir")
        return
    if args.input:
        raise UsageError("argument --input-dir: give inputs with --input or --input-dir, "
                         "not both")
    if args.output:
        raise UsageError("argument --input-dir: save the outputs with --output-dir, one .npz "
                         "per input file")


def _trace(args, model, folder):
    """The --trace folder as a trace that never writes over the run's own files."""
    if folder is None:
        return None
    return DirectoryTrace(folder, model, protected=common.protected_files(args))


def execute(args) -> int:
    _check_usage(args)
    _check_outputs(args)
    if args.memory_budget is not None:
        with budget.limit(args.memory_budget):
            return _execute(args)
    return _execute(args)


def _compile(args):
    """The model read and compiled (constant layers are computed here, which may take long)."""
    model = common.load_model(args, runs=True)
    common.apply_shapes(model, args.shape, args.model)
    return model, compile_model(model, config=common.compile_config(args))


def _execute(args) -> int:
    model, compiled = interruptible.call(_compile, args)
    if args.input_dir is not None:
        return run_dir.execute(args, model, compiled, checksum,
                               lambda path, outputs: save_npz(path, outputs, args,
                                                              "--output-dir"))
    given = common.load_inputs(args.input, compiled, args.model)
    inputs = common.complete_inputs(model, given, args.seed)
    common.say_filled_dims(model, inputs, given)
    outputs = interruptible.call(compiled, inputs, trace=_trace(args, model, args.trace),
                                 trace_bodies=args.trace_bodies)
    if args.output:
        save_npz(args.output, outputs, args)
    generated = [n for n in inputs if n not in given]
    print(f"inputs ({'generated from seed ' + str(args.seed) if generated else 'given'}"
          f"{': ' + printable.line(', '.join(generated)) if generated and given else ''}):")
    for line in table({n: inputs[n] for n in compiled.input_names()}):
        print("  " + line)
    print("outputs:")
    for line in table(outputs):
        print("  " + line)
    if args.output:
        print(f"saved {len(outputs)} output{'s' * (len(outputs) != 1)} to {args.output}")
    if args.trace:
        print(f"traced every layer's outputs to {args.trace} (index: "
              f"{os.path.join(args.trace, 'index.json')})")
    sys.stdout.flush()
    return 0
