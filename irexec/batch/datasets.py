"""Datasets as people keep them, as a list of samples in a stated order.

* a folder of ``.npz`` files (one sample each, arrays keyed by input name) and ``.npy`` files (one
  sample of a single-input model); inputs a file lacks are made from the seed;
* one ``.npy`` or ``.npz`` file holding many samples along a batch axis (``batch_axis``): sample
  ``i`` is index ``i`` of that axis of every array, kept as an axis of size 1 when the model's
  input has one there;
* a folder of images (PNG, JPEG, BMP; read by Pillow, the ``image`` extra): each laid out for
  the model's single image input (NCHW or NHWC, from the input's ``layout`` in rt_info or
  ``layout``), resized to its static height and width (bilinear), then ``(x - mean) / scale``
  per channel, in the input's element type.

Files are taken in sorted order of their names (byte order of the UTF-8 names, as ``sorted``
gives); the order is the samples' numbering, which results and output files follow.

A ``Sample`` is small and picklable: a name, where it comes from, and (for a slice of one file, or
a sample given as arrays) its arrays. ``load`` turns it into the model's inputs on whichever side
runs it; a sample that does not fit the model is an IRError naming its file and the problem.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from irexec.diagnostics.diagnostic import Location
from irexec.errors import IRError
from irexec.io import npy
from irexec.io.arrays import from_file

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")
ARRAY_SUFFIXES = (".npz", ".npy")
INSTALL_PILLOW = ("reading images needs Pillow, which is not installed here; install it with: "
                  "pip install Pillow (in a clone of irexec: pip install '.[image]')")


@dataclass(frozen=True)
class ImageOptions:
    layout: str | None = None  # "NCHW" or "NHWC"; None: from the model
    mean: tuple[float, ...] = ()
    scale: tuple[float, ...] = ()


@dataclass
class Sample:
    """One sample: ``kind`` is "npz", "npy", "image" (read from ``path``) or "arrays"
    (``arrays`` holds it, keyed by input name or, for a model of one input, None)."""

    name: str  # as shown: the file's name, or file[index]
    stem: str  # its output file's name without .npz
    kind: str
    path: str | None = None
    arrays: dict | None = field(default=None, repr=False)
    axis: int | None = None  # a slice of a batch file: the axis it was taken along (kept)

    def as_arrays(self, image: ImageOptions | None = None, compiled=None) -> Sample:
        """The same sample with its arrays read here (to send to workers without the files)."""
        if self.kind == "arrays":
            return self
        return Sample(self.name, self.stem, "arrays", self.path,
                      _read(self, image or ImageOptions(), compiled), self.axis)


def _error(path, message: str, code: str = "IR606") -> IRError:
    return IRError.make(code, message, Location(str(path) if path else None))


def folder_samples(folder) -> list[Sample]:
    """The samples of a folder: every .npz/.npy file, or every image, sorted by name. IRError
    if it is no folder, holds none of them, or mixes arrays and images."""
    path = Path(folder)
    if not path.is_dir():
        raise _error(folder, f"--input-dir: '{folder}' is not a folder", "IR001")
    files = sorted((p for p in path.iterdir() if p.is_file()), key=lambda p: p.name)
    arrays = [p for p in files if p.suffix.lower() in ARRAY_SUFFIXES]
    images = [p for p in files if p.suffix.lower() in IMAGE_SUFFIXES]
    if arrays and images:
        raise _error(folder, f"--input-dir: '{folder}' holds both arrays (.npz/.npy) and images; "
                             f"keep one kind of sample per folder", "IR001")
    chosen = arrays or images
    if not chosen:
        raise _error(folder, f"--input-dir: '{folder}' holds no .npz files (nor .npy files or "
                             f"images)",
                     "IR001")
    stems = {}
    for p in chosen:
        if p.stem in stems:
            raise _error(p, f"--input-dir: '{p.name}' and '{stems[p.stem]}' would both save "
                            f"their outputs as {p.stem}.npz; rename one", "IR001")
        stems[p.stem] = p.name
    kind = {".npz": "npz", ".npy": "npy"}
    return [Sample(p.name, p.stem, kind.get(p.suffix.lower(), "image"), str(p)) for p in chosen]


def batch_samples(path, axis: int = 0) -> list[Sample]:
    """The samples of one .npy or .npz file along ``axis`` of its arrays (each array sliced the
    same way; all must have the same length there)."""
    arrays = _load_file(path)
    if isinstance(arrays, np.ndarray):
        arrays = {None: arrays}
    lengths = {}
    for key, a in arrays.items():
        if not -a.ndim <= axis < a.ndim:
            what = f"array '{key}'" if key else "the array"
            raise _error(path, f"--batch-axis {axis}: {what} has {a.ndim} dims, no axis {axis}",
                         "IR603")
        lengths[key] = a.shape[axis]
    if len(set(lengths.values())) > 1:
        said = ", ".join(f"'{k}' {n}" for k, n in lengths.items())
        raise _error(path, f"--batch-axis {axis}: the arrays hold different numbers of samples "
                           f"({said})", "IR603")
    count = next(iter(lengths.values()))
    width = len(str(max(count - 1, 0)))
    name = os.path.basename(os.fspath(path))
    stem = os.path.splitext(name)[0]
    return [Sample(f"{name}[{i}]", f"{stem}_{i:0{width}d}", "arrays", os.fspath(path),
                   {k: np.take(a, [i], axis=axis) for k, a in arrays.items()}, axis)
            for i in range(count)]


def given_samples(values) -> list[Sample]:
    """Samples given in Python: each a dict {input name: array}, a list in Parameter order, or
    one array (a model of one input)."""
    out = []
    for i, value in enumerate(values):
        if isinstance(value, Sample):
            out.append(value)
            continue
        if isinstance(value, dict):
            arrays = dict(value)
        elif isinstance(value, (list, tuple)):
            arrays = {i_: v for i_, v in enumerate(value)}
        else:
            arrays = {None: value}
        out.append(Sample(f"sample {i}", f"{i}", "arrays", None, arrays))
    return out


def _load_file(path):
    try:
        return npy.load(os.fspath(path)) if str(path).lower().endswith(".npy") \
            else npy.load_npz(os.fspath(path))
    except OSError as e:
        raise _error(path, f"cannot read the file: {e.strerror or e}") from None
    except npy.NpyError as e:
        raise _error(path, str(e)) from None


def _read(sample: Sample, image: ImageOptions, compiled) -> dict:
    """A file sample's arrays, keyed by the names in the file (None: the single input)."""
    if sample.kind == "image":
        return {None: read_image(sample.path, compiled, image)}
    arrays = _load_file(sample.path)
    if isinstance(arrays, np.ndarray):
        return {None: arrays}
    return arrays


def load(sample: Sample, compiled, image: ImageOptions | None = None) -> dict[str, np.ndarray]:
    """The sample's arrays keyed by Parameter layer name, each checked against the model's input
    (element type and shape): IRError naming the sample's file otherwise. Inputs the sample
    lacks are left for the caller to make from the seed."""
    arrays = sample.arrays if sample.kind == "arrays" else _read(sample, image or ImageOptions(),
                                                                  compiled)
    names = compiled.input_names()
    where = sample.path or sample.name
    loaded: dict[str, np.ndarray] = {}
    for key, array in arrays.items():
        if key is None or isinstance(key, int):
            position = key or 0
            if key is None and len(names) != 1:
                raise _error(where, f"one array, but the model takes {len(names)} inputs "
                                    f"({', '.join(names)}); give an .npz keyed by input name",
                             "IR602")
            if position >= len(names):
                raise _error(where, f"{position + 1} arrays, but the model takes {len(names)} "
                                    f"inputs", "IR602")
            layer, label = names[position], f"the array for '{names[position]}'"
        else:
            layer = compiled.input_name(key)
            label = f"array '{key}'"
            if layer is None:
                raise _error(where, f"array '{key}': the model has no input of that name "
                                    f"(inputs: {', '.join(names)})", "IR601")
        if layer in loaded:
            raise _error(where, f"input '{layer}' is given twice", "IR601")
        if sample.axis is not None:
            array = _fit_rank(array, sample.axis, compiled.model.input(layer).partial_shape)
        try:
            value = array if sample.path is None \
                else from_file(np.asarray(array), compiled.input_element_type(layer))
            loaded[layer] = compiled.check_input(layer, value)
        except ValueError as e:
            raise _error(where, f"{label} {e}", "IR603") from None
        except IRError as e:  # name the file the array came from, not the model
            d = e.diagnostics[0]
            raise _error(where, f"{label}: {d.message}", d.code) from None
    return loaded


def _fit_rank(array: np.ndarray, axis: int, shape) -> np.ndarray:
    """A slice taken along ``axis`` keeps that axis (size 1) where the input has it, and
    drops it where the input has one dim fewer."""
    if shape is not None and shape.rank_is_static and len(shape) == array.ndim - 1:
        return np.squeeze(array, axis=axis)
    return array


# --- images ------------------------------------------------------------------------------------

def _layout_of(compiled, name: str, given: str | None) -> str:
    if given:
        return given.upper()
    port = compiled.model.input(name)
    for entry in getattr(port, "rt_info", []) + getattr(port.node, "rt_info", []):
        for e in [entry, *entry.children]:
            if e.attrs.get("name") == "layout" and e.attrs.get("layout"):
                letters = e.attrs["layout"].strip("[]").replace(",", "").replace(" ", "")
                if letters.upper() in ("NCHW", "NHWC"):
                    return letters.upper()
    shape = port.partial_shape
    if shape is not None and shape.rank_is_static and len(shape) == 4:
        dims = [d.min if d.is_static else None for d in shape]
        if dims[1] in (1, 3, 4) and dims[3] not in (1, 3, 4):
            return "NCHW"
        if dims[3] in (1, 3, 4) and dims[1] not in (1, 3, 4):
            return "NHWC"
    raise _error(compiled.model.path, f"cannot tell whether input '{name}' is NCHW or NHWC; "
                                      f"give --layout NCHW or --layout NHWC", "IR603")


def read_image(path, compiled, options: ImageOptions) -> np.ndarray:
    """An image as the model's single input: laid out, resized, normalised, typed."""
    try:
        from PIL import Image
    except ImportError:
        raise _error(path, INSTALL_PILLOW, "IR001") from None
    names = compiled.input_names()
    if len(names) != 1:
        raise _error(path, f"images feed a model of one input; this one takes {len(names)}",
                     "IR602")
    name = names[0]
    layout = _layout_of(compiled, name, options.layout)
    shape = compiled.model.input(name).partial_shape
    if shape is None or not shape.rank_is_static or len(shape) != 4:
        raise _error(path, f"input '{name}' is not 4-dimensional, so it takes no image", "IR603")
    dims = [d.min if d.is_static else None for d in shape]
    c_axis, h_axis, w_axis = (1, 2, 3) if layout == "NCHW" else (3, 1, 2)
    channels, height, width = dims[c_axis], dims[h_axis], dims[w_axis]
    if height is None or width is None or channels is None:
        raise _error(path, f"input '{name}' has no static height, width and channels "
                           f"({shape}); images are resized to a static size", "IR603")
    if channels not in (1, 3, 4):
        raise _error(path, f"input '{name}' has {channels} channels; images give 1, 3 or 4",
                     "IR603")
    try:
        with Image.open(path) as img:
            img = img.convert({1: "L", 3: "RGB", 4: "RGBA"}[channels])
            if img.size != (width, height):
                img = img.resize((width, height), Image.BILINEAR)
            pixels = np.asarray(img, dtype=np.float32)
    except OSError as e:  # Pillow's UnidentifiedImageError is an OSError
        raise _error(path, f"cannot read the image: {e}") from None
    pixels = pixels.reshape(height, width, channels)
    if options.mean:
        pixels = pixels - _per_channel(options.mean, channels, "--mean", path)
    if options.scale:
        pixels = pixels / _per_channel(options.scale, channels, "--scale", path)
    image = pixels[None] if layout == "NHWC" else pixels.transpose(2, 0, 1)[None]
    et = compiled.input_element_type(name)
    if et.dtype is None or et.dtype.kind not in "fiu":
        raise _error(path, f"input '{name}' is {et}; images feed numeric inputs", "IR603")
    if et.dtype.kind in "iu":
        info = np.iinfo(et.dtype)
        image = np.clip(np.rint(image), info.min, info.max)
    return np.ascontiguousarray(image.astype(et.dtype))


def _per_channel(values, channels: int, option: str, path) -> np.ndarray:
    if len(values) not in (1, channels):
        raise _error(path, f"{option} gives {len(values)} values for {channels} channels; give "
                           f"one or {channels}", "IR603")
    return np.asarray(values, np.float32)
