"""Regenerate the sample models in samples/ with irexec's own IR writer.

    python tools/make_samples.py [OUTDIR]

Every sample is small, real (an .xml with its .bin) and readable by OpenVINO (tests/io check it),
except those of irexec's own ops (``version="irexec1"``), which only irexec reads.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import irexec
from irexec.builder import ModelBuilder


def reverse_index():
    """Reverse-1 in index mode, as the specification's example: flip axis 1 of [3,10,100,200]."""
    b = ModelBuilder("reverse_index")
    data = b.parameter("data", "f32", [3, 10, 100, 200])
    axes = b.constant(np.array([1], np.int64), name="axes")
    b.result(b.op("Reverse", data, axes, mode="index", name="reversed"), name="result")
    return b.build()


def reverse_mask():
    """Reverse-1 in mask mode: flip the first and last axes of an i32 tensor."""
    b = ModelBuilder("reverse_mask")
    data = b.parameter("data", "i32", [2, 3, 4])
    mask = b.constant(np.array([True, False, True]), name="mask")
    b.result(b.op("Reverse", data, mask, mode="mask", name="reversed"), name="result")
    return b.build()


def reverse_sequence():
    """ReverseSequence-1 as the specification's example: data [4,10,100,200], lengths
    [2,4,8,10] along seq_axis 1 for each index of batch_axis 0."""
    b = ModelBuilder("reverse_sequence")
    data = b.parameter("data", "f32", [4, 10, 100, 200])
    lengths = b.constant(np.array([2, 4, 8, 10], np.int32), name="seq_lengths")
    b.result(b.op("ReverseSequence", data, lengths, batch_axis=0, seq_axis=1,
                  name="reversed"), name="result")
    return b.build()


def convert_reverse_chain():
    """Convert -> ReverseSequence -> Reverse with two outputs; the lengths are an input too."""
    b = ModelBuilder("convert_reverse_chain")
    data = b.parameter("data", "i32", [5, 4, 3])
    lengths = b.parameter("seq_lengths", "i64", [4])
    as_float = b.op("Convert", data, destination_type="f32", name="to_f32")
    seq = b.op("ReverseSequence", as_float, lengths, batch_axis=1, seq_axis=0,
               name="reversed_sequences")
    axes = b.constant(np.array([-1], np.int64), name="last_axis")
    flipped = b.op("Reverse", seq, axes, mode="index", name="flipped")
    b.result(seq, name="sequences_out")
    b.result(flipped, name="flipped_out")
    return b.build()


def reverse_subsequences():
    """irexec's own ReverseSubsequences-1 (version="irexec1", DirectML semantics) as DirectML's
    shape example: data {2,3,4,5}, axis 1, one u32 length per fibre in lengths {2,1,4,5}. Not
    an OpenVINO op: OpenVINO does not read this sample."""
    b = ModelBuilder("reverse_subsequences")
    data = b.parameter("data", "f32", [2, 3, 4, 5])
    lengths = b.parameter("lengths", "u32", [2, 1, 4, 5])
    b.result(b.op("ReverseSubsequences", data, lengths, version="irexec1", axis=1,
                  name="reversed"), name="result")
    return b.build()


def narrow_types():
    """Packed and 8-bit element types: u4 weights (two per byte in the .bin) and the nf4
    codebook converted to floats, and an f8e4m3 input reversed."""
    b = ModelBuilder("narrow_types")
    weights = b.constant(np.arange(32, dtype=np.uint8).reshape(4, 8) % 16, "u4", name="weights")
    b.result(b.op("Convert", weights, destination_type="f32", name="dequantized"),
             name="dequantized_out")
    codebook = b.constant(np.arange(16, dtype=np.uint8), "nf4", name="nf4_codes")
    b.result(b.op("Convert", codebook, destination_type="f16", name="codebook"),
             name="codebook_out")
    x = b.parameter("x", "f8e4m3", [2, 8])
    axes = b.constant(np.array([1], np.int64), name="axes")
    b.result(b.op("Reverse", x, axes, mode="index", name="flipped"), name="flipped_out")
    return b.build()


SAMPLES = [reverse_index, reverse_mask, reverse_sequence, convert_reverse_chain,
           reverse_subsequences, narrow_types]


def main(outdir: str) -> int:
    os.makedirs(outdir, exist_ok=True)
    for make in SAMPLES:
        path = os.path.join(outdir, f"{make.__name__}.xml")
        irexec.save_model(make(), path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                                       "..", "samples")))
