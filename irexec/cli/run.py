"""``irexec run MODEL``: run a model on given or generated inputs and show the outputs."""

from __future__ import annotations

import dataclasses
import os
import stat
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np

from irexec import budget
from irexec.api import compile_model
from irexec.cli import common, describe, interruptible
from irexec.cli.progress import Progress
from irexec.cli.usage import UsageError
from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError
from irexec.diagnostics import printable
from irexec.io import npy, safe_write
from irexec.io.arrays import from_file, string_bytes, to_file
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
                   help="run once per .npz file in DIR (arrays keyed by input name; inputs a "
                        "file lacks are generated from --seed), or per .npy file for a model "
                        "of one input, and print one line per file")
    p.add_argument("--output-dir", metavar="OUT",
                   help="with --input-dir: save each file's outputs as OUT/<file>.npz")
    p.add_argument("--fail-fast", action="store_true",
                   help="with --input-dir: stop at the first file that fails (default: report "
                        "it, go on with the others, exit 1 at the end)")
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


def _write_npz(f, arrays: dict[str, np.ndarray]) -> None:
    """What np.savez writes, for any key: np.savez takes keys as keyword arguments, so outputs
    named 'file' or 'allow_pickle' would collide with its own parameters."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            array = to_file(array)  # strings as unicode (no pickle), narrow types as their bits
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def save_npz(path: str, arrays: dict[str, np.ndarray], args, option="--output") -> None:
    """Write the outputs through the one writer: atomically, never over the run's inputs."""
    common.write_output(option, path, lambda f: _write_npz(f, arrays), args)


def _check_usage(args) -> None:
    if args.trace_bodies and not args.trace:
        raise UsageError("argument --trace-bodies: needs --trace DIR")
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


def _input_files(folder: str) -> list[Path]:
    """The .npz and .npy files of the --input-dir, in name order (a .npy file is an input of
    a model of one input; for a model of several it fails, named, never skipped)."""
    path = Path(folder)
    if not path.is_dir():
        raise IRError.make("IR001", f"--input-dir: '{folder}' is not a folder", Location(folder))
    files = sorted(p for p in path.iterdir()
                   if p.suffix.lower() in (".npz", ".npy") and p.is_file())
    if not files:
        raise IRError.make("IR001", f"--input-dir: '{folder}' holds no .npz or .npy files",
                           Location(folder))
    return files


def _load_npy(path: Path, compiled) -> dict[str, np.ndarray]:
    """A .npy file of the --input-dir: the one input of a model of one input."""
    names = compiled.input_names()
    if len(names) != 1:
        raise IRError.make("IR601", f"a .npy file holds one array, but the model has "
                                    f"{len(names)} inputs ({', '.join(names)}); give an .npz "
                                    f"file keyed by input name", Location(str(path)))
    try:
        array = npy.load(path)
    except OSError as e:
        raise IRError.make("IR606", f"cannot read the file: {e.strerror or e}",
                           Location(str(path))) from None
    except npy.NpyError as e:
        raise IRError.make("IR606", str(e), Location(str(path))) from None
    if not isinstance(array, np.ndarray):  # an .npz archive under a .npy name
        raise IRError.make("IR606", "the file is an .npz archive; name it .npz",
                           Location(str(path)))
    return _checked(names[0], array, compiled, path)


def _checked(key, array, compiled, path: Path, layer=None) -> np.ndarray:
    """One array of an --input-dir file checked as the input ``key`` names."""
    layer = layer or compiled.input_name(key)
    try:
        return compiled.check_input(layer, from_file(array, compiled.input_element_type(layer)))
    except ValueError as e:
        raise IRError.make("IR603", f"array '{key}' {e}", Location(str(path))) from None
    except IRError as e:  # name the file the array came from, not the model
        d = e.diagnostics[0]
        raise IRError.make(d.code, f"array '{key}': {d.message}", Location(str(path))) \
            from None


def _load_npz(path: Path, compiled) -> dict[str, np.ndarray]:
    """One --input-dir file: its arrays, keyed by the Parameter layer names they are for."""
    if path.suffix.lower() == ".npy":
        array = _load_npy(path, compiled)
        return {compiled.input_name(compiled.input_names()[0]): array}
    try:
        arrays = npy.load_npz(path)
    except OSError as e:
        raise IRError.make("IR606", f"cannot read the file: {e.strerror or e}",
                           Location(str(path))) from None
    except npy.NpyError as e:
        raise IRError.make("IR606", str(e), Location(str(path))) from None
    loaded: dict[str, np.ndarray] = {}
    for key, array in arrays.items():
        layer = compiled.input_name(key)
        if layer is None:
            raise IRError.make("IR601", f"array '{key}': the model has no input of that name "
                                        f"(inputs: {', '.join(compiled.input_names())})",
                               Location(str(path)))
        if layer in loaded:
            raise IRError.make("IR601", f"input '{layer}' is given twice", Location(str(path)))
        loaded[layer] = _checked(key, array, compiled, path, layer)
    return loaded


def _trace(args, model, folder):
    """The --trace folder as a trace that never writes over the run's own files."""
    if folder is None:
        return None
    return DirectoryTrace(folder, model, protected=common.protected_files(args))


def _run_file(args, model, compiled, path: Path, names: list[str]) -> list[str]:
    """Run one --input-dir file; the CRC-32 cells of its line."""
    given = _load_npz(path, compiled)
    inputs = common.complete_inputs(model, given, args.seed)
    trace = _trace(args, model, os.path.join(args.trace, path.stem) if args.trace else None)
    try:
        outputs = interruptible.call(compiled, inputs, trace=trace,
                                     trace_bodies=args.trace_bodies)
    except IRError as e:  # say which file's inputs the layer refused
        raise IRError([dataclasses.replace(d, message=f"{d.message} (inputs from '{path}')")
                       for d in e.diagnostics]) from None
    if args.output_dir:
        save_npz(os.path.join(args.output_dir, path.stem + ".npz"), outputs, args,
                 "--output-dir")
    return [checksum(outputs[n]).ljust(max(8, len(n))) for n in names]


def _run_dir(args, model, compiled) -> int:
    files = _input_files(args.input_dir)
    names = compiled.output_names()
    width = max(len("file"), *(len(printable.line(f.name)) for f in files))
    header = "  ".join(["file".ljust(width),
                        *(printable.line(n).ljust(8) for n in names)]).rstrip()
    if args.output_dir:
        try:
            os.makedirs(args.output_dir, exist_ok=True)
        except OSError as e:
            raise IRError.make("IR001", f"cannot create '{args.output_dir}': {e.strerror or e}",
                               Location(args.output_dir)) from None
    print(f"crc32 of each output, one line per file in {args.input_dir}:")
    print("  " + header, flush=True)
    failed = []
    with Progress(len(files)) as progress:
        for path in files:
            progress.start(path.name)
            try:
                cells = _run_file(args, model, compiled, path, names)
            except IRError as e:
                if args.fail_fast:
                    raise
                failed.append(printable.line(path.name))
                for d in e.diagnostics:
                    progress.print(f"error: {d}", file=sys.stderr)
                cells = ["failed"]
            progress.print("  " + "  ".join([printable.line(path.name).ljust(width),
                                             *cells]).rstrip())
            progress.advance()
    done = f"ran {len(files)} file{'s' * (len(files) != 1)}"
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
        return _run_dir(args, model, compiled)
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
