"""What several commands share: the arguments they declare alike, reading the model, loading
``--input`` files, the inputs made from ``--seed``, and writing output files.

Commands import from here, never from each other; ``main.py`` only dispatches.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

import numpy as np

from irexec import budget
from irexec.api import read_model
from irexec.cli.usage import UsageError
from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError
from irexec.io import npy, safe_write
from irexec.io.arrays import from_file
from irexec.ir import element_type as et_table
from irexec.diagnostics import printable
from irexec.runtime import fusion
from irexec.runtime.inputs import filled_dims, make_inputs

SEED_LIMIT = 2**63  # seeds are 0 .. 2**63 - 1, what numpy's generators take on every platform


# --- argument declarations --------------------------------------------------------------------

def doc(name: str) -> str:
    """How a help text or message names one of irexec's documents: an installed irexec has no
    docs/ folder, so the name says where the file is."""
    return f"docs/{name} in irexec's source repository"


def add_model_arguments(p, onnx: bool = True, weights: bool = True, help: str | None = None):
    """The positional MODEL and ``--weights BIN``, worded alike in every command."""
    p.add_argument("model", help=help or "the model's .xml file" +
                   (", or an .onnx file (needs irexec[onnx])" if onnx else ""))
    if weights:
        p.add_argument("--weights", metavar="BIN",
                       help="the .bin file (default: the .xml's name with .bin)")


def add_input_arguments(p) -> None:
    """``--input NAME=FILE.npy`` (repeatable) and ``--seed N`` for the inputs not given."""
    p.add_argument("--input", "-i", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input value from a .npy file; NAME is a Parameter's layer or tensor "
                        "name (repeatable); inputs not given are generated from --seed")
    p.add_argument("--seed", type=seed, default=0,
                   help="seed for generated inputs, 0 to 2**63-1 (default 0)")


def add_shape_argument(p) -> None:
    """``--shape NAME[1,3,224,224]`` (benchmark_app's form) or ``NAME=[...]``, repeatable."""
    p.add_argument("--shape", type=shape_spec, action="append", default=[],
                   metavar="NAME[1,3,224,224]",
                   help="reshape the input NAME to this static shape before running, as "
                        "OpenVINO's Model.reshape and benchmark_app's -shape do (also "
                        "NAME=[...]; [...] alone for a model of one input; repeatable); "
                        "without it, dynamic dims of generated inputs are filled and the "
                        "values chosen are said on stderr")


SHAPE_FORMS = "NAME[1,3,224,224], NAME=[1,3,224,224] or, for a model of one input, [1,3,224,224]"


def shape_spec(text: str) -> tuple[str | None, tuple[int, ...]]:
    """An argparse type: ``NAME[d,...]``, ``NAME=[d,...]`` or ``[d,...]`` (name None); each
    d a whole number >= 0 (``[]`` is a scalar)."""
    bad = argparse.ArgumentTypeError(f"'{text[:60]}' is not a shape; give {SHAPE_FORMS}")
    body = text.strip()
    if not body.endswith("]") or "[" not in body:
        raise bad
    at = body.rindex("[")
    name, dims = body[:at], body[at + 1:-1]
    if name.endswith("="):
        name = name[:-1]
    if "[" in name or "]" in name or (not name and body[:at]):
        raise bad
    parts = [d.strip() for d in dims.split(",")] if dims.strip() else []
    if not all(d.isdigit() and d.isascii() for d in parts):
        raise bad
    return (name or None), tuple(int(d) for d in parts)


def apply_shapes(model, specs, model_path: str) -> None:
    """Reshape the model's inputs to the ``--shape`` values (Model.reshape: every shape
    inferred again); an unknown input or a shape the model refuses is one error line."""
    if not specs:
        return
    wanted = {}
    for name, dims in specs:
        text = f"--shape {name + '=' if name else ''}[{','.join(map(str, dims))}]"
        if name is None:
            if len(model.parameters) != 1:
                raise UsageError(f"{text}: the model has {len(model.parameters)} inputs; name "
                                 f"the one to shape (NAME[...])")
            key = model.parameters[0].name
        else:
            found = [p.name for p in model.parameters
                     if name == p.name or name in p.outputs[0].names]
            if not found:
                inputs = ", ".join(p.name for p in model.parameters)
                raise IRError.make("IR601", f"{text}: the model has no input named {name!r} "
                                            f"(inputs: {inputs})", Location(model_path))
            key = found[0]
        if key in wanted:
            raise UsageError(f"{text}: input '{key}' is shaped twice")
        wanted[key] = (list(dims), text)
    try:
        model.reshape({key: dims for key, (dims, _) in wanted.items()})
    except IRError as e:
        first = e.diagnostics[0]
        texts = " ".join(text for _, text in wanted.values())
        raise IRError([dataclasses.replace(
            first, message=f"{texts}: the model refuses it: {first.message}")]) from None


def say_filled_dims(model, inputs: dict, given: dict) -> None:
    """One line on stderr per generated input whose dynamic dims irexec filled."""
    for name, declared, shape in filled_dims(model, inputs, given):
        dims = ",".join(map(str, shape))
        print(printable.line(f"note: input '{name}' {declared}: dynamic dims filled as "
                             f"[{dims}]; give --shape {name}[...] to choose"), file=sys.stderr)


def add_memory_budget_argument(p) -> None:
    """``--memory-budget SIZE``: the budget of irexec/budget.py while the command runs
    (``validate`` and ``run`` refuse the same tensors with it)."""
    p.add_argument("--memory-budget", metavar="SIZE", type=memory_size,
                   help="the most memory one tensor may take, e.g. 2G or 25%% (default: "
                        f"${budget.ENV}, else half the machine's memory)")


def memory_size(text: str) -> int:
    """An argparse type: a size the memory budget takes."""
    try:
        return budget.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_decompression_argument(p) -> None:
    p.add_argument("--decompression", choices=fusion.MODES, default=fusion.MODES[0],
                   help="compressed weights (Convert, Subtract, Multiply feeding MatMul, Gather, "
                        "Convolution): 'fused' computes them once in f32 as OpenVINO's plugins "
                        "do (default), 'per-call' the same on every call (less memory), 'ir' "
                        f"layer by layer as the IR's types say ({doc('numerics.md')})")
    p.add_argument("--fusion", choices=fusion.FUSION_MODES, default=fusion.FUSION_MODES[0],
                   help="'on' (default) runs the patterns converters write as chains of layers "
                        "(LayerNorm, GELU, attention, a bias and an activation after a MatMul "
                        "...) as one step each, with the same results; 'off' runs every layer "
                        f"as a step of its own ({doc('performance.md')})")


def compile_config(args) -> dict | None:
    """The compile config the command's options ask for (--precise, --decompression,
    --fusion)."""
    config = {}
    if getattr(args, "precise", False):
        config["precision"] = "f64"
    mode = getattr(args, "decompression", fusion.MODES[0])
    if mode != fusion.MODES[0]:
        config["decompression"] = mode
    if getattr(args, "fusion", fusion.FUSION_MODES[0]) != fusion.FUSION_MODES[0]:
        config["fusion"] = args.fusion
    return config or None


def seed(text: str) -> int:
    """An argparse type: a seed in [0, 2**63)."""
    try:
        value = int(text, 10)
    except ValueError:
        value = None
    if value is None or not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a seed; give a whole number "
                                         f"from 0 to {SEED_LIMIT - 1} (2**63-1)")
    return value


# --- reading ----------------------------------------------------------------------------------

def print_warnings(diagnostics) -> None:
    for d in diagnostics:
        print(f"warning: {d}", file=sys.stderr)


NOT_IMPLEMENTED = "IR113"  # ops irexec cannot run: a command that runs says so as its error


def load_model(args, runs: bool = False):
    """``read_model`` of the command's MODEL (and ``--weights``), its warnings printed. A
    command that ``runs`` the model leaves out the warning about ops irexec cannot run: its
    one error line (from compile_model) names them."""
    model = read_model(args.model, getattr(args, "weights", None))
    print_warnings([d for d in model.diagnostics if not (runs and d.code == NOT_IMPLEMENTED)])
    return model


def weights_path(args, model: str | None = None) -> str | None:
    """The .bin the command reads: ``--weights``, else the one beside an .xml (None for ONNX)."""
    model = model if model is not None else args.model
    if getattr(args, "weights", None):
        return args.weights
    if str(model).lower().endswith(".onnx"):
        return None
    return os.path.splitext(model)[0] + ".bin"


def type_name(array: np.ndarray) -> str:
    """The element type's IR name of an array (``f32``), else numpy's dtype name."""
    try:
        return et_table.from_dtype(array.dtype).name
    except KeyError:
        return str(array.dtype)


def _input_spec(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise UsageError(f"argument --input: '{spec}' is not NAME=FILE.npy")
    return name, path


def input_paths(specs: list[str]) -> list[str]:
    """The files named by ``--input NAME=FILE`` arguments (checked for form)."""
    return [_input_spec(s)[1] for s in specs]


def load_inputs(specs: list[str], compiled, model_path: str) -> dict[str, np.ndarray]:
    """The arrays of ``--input NAME=FILE.npy`` arguments, keyed by Parameter layer name, each
    checked against its input's element type and shape."""
    loaded: dict[str, np.ndarray] = {}
    for spec in specs:
        name, path = _input_spec(spec)
        layer = compiled.input_name(name)
        if layer is None:
            raise IRError.make("IR601", f"--input {name}: the model has no input named {name!r} "
                                        f"(inputs: {', '.join(compiled.input_names())})",
                               Location(model_path))
        if layer in loaded:
            raise IRError.make("IR601", f"--input {name}: input '{layer}' is given twice",
                               Location(model_path))
        try:
            array = npy.load(path)
        except OSError as e:
            raise IRError.make("IR606", f"--input {name}: cannot read the file: "
                                        f"{e.strerror or e}", Location(path)) from None
        except npy.NpyError as e:
            raise IRError.make("IR606", f"--input {name}: {e}", Location(path)) from None
        if not isinstance(array, np.ndarray):  # an .npz archive: one array is that array
            if len(array) != 1:
                raise IRError.make("IR606", f"--input {name}: '{path}' is an .npz archive of "
                                            f"{len(array)} arrays; give a .npy file, or an .npz "
                                            f"of exactly one array", Location(path))
            array = next(iter(array.values()))
        try:
            array = from_file(array, compiled.input_element_type(layer))
        except ValueError as e:
            raise IRError.make("IR603", f"--input {name}: the array {e}", Location(path)) from None
        # Check type and shape now: the inputs made from the seed are sized from these.
        loaded[layer] = compiled.check_input(layer, array)
    return loaded


def complete_inputs(model, given: dict[str, np.ndarray], seed_value: int) -> dict:
    """The given inputs plus every other one made from the seed."""
    return {**given, **make_inputs(model, given, seed_value)}


# --- writing ----------------------------------------------------------------------------------

def protected_files(args) -> safe_write.Guard:
    """The files a command reads, which no output of it may replace (worked out once per
    command)."""
    known = getattr(args, "_protected_files", None)
    if known is not None:
        return known
    files = {}
    for model in getattr(args, "models", None) or [args.model]:
        files[model] = "the model" if not hasattr(args, "models") else "a model it checks"
        weights = weights_path(args, model)
        if weights:
            files.setdefault(weights, "the model's weights")
    for spec in getattr(args, "input", None) or []:
        path = spec.partition("=")[2]
        if path:
            files.setdefault(path, "an --input file")
    folder = getattr(args, "input_dir", None)
    if folder and os.path.isdir(folder):
        for name in os.listdir(folder):
            files.setdefault(os.path.join(folder, name), "a file of the --input-dir")
    elif folder and os.path.isfile(folder):  # one file of many samples
        files.setdefault(folder, "the --input-dir file")
    args._protected_files = safe_write.Guard(files)
    return args._protected_files


def check_output(option: str, path: str, args) -> None:
    """Refuse now, before any work, an output that may not be written (UsageError)."""
    try:
        safe_write.check_target(path, protected_files(args))
    except safe_write.WriteRefused as e:
        raise UsageError(f"argument {option}: {e}") from None


def write_output(option: str, path: str, write, args) -> None:
    """Write a command's output file through the one writer (irexec/io/safe_write.py); a
    failure is one error line (IR001) and leaves ``path`` as it was."""
    try:
        safe_write.write_file(path, write, protected_files(args))
    except safe_write.WriteRefused as e:
        raise UsageError(f"argument {option}: {e}") from None
    except OSError as e:
        raise IRError.make("IR001", f"cannot write '{path}': {e.strerror or e}",
                           Location(path)) from None
