"""The weight-decompression pattern of compressed models: a narrow-integer (u4, i4, u8, nf4) Const
-> Convert to f16/f32 -> Subtract a zero point -> Multiply by a scale, bit-exact with OpenVINO.

Subtract and Multiply come from the element-wise ops (issue 16's other half): until they are
registered these tests skip, and they run as soon as both halves are merged."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from irexec.ir import element_type as et_table
from irexec.builder import ModelBuilder
from irexec.ops import registry


def _have(*types) -> bool:
    try:
        for t in types:
            registry.lookup(t, "opset1")
    except registry.LookupFailure:
        return False
    return True


pytestmark = pytest.mark.skipif(not _have("Subtract", "Multiply"),
                                reason="needs the element-wise Subtract and Multiply")

CASES = [("u4", "f16"), ("u4", "f32"), ("i4", "f16"), ("i4", "f32"), ("u8", "f16"),
         ("u8", "f32"), ("nf4", "f16"), ("nf4", "f32")]


def _parts(narrow, wide, groups=4, group_size=8, rows=3):
    """The codes, zero points (None for nf4) and scales of one compressed weight."""
    rng = np.random.default_rng(5)
    et = et_table.from_name(narrow)
    if narrow == "nf4" or et.kind == "uint":
        top = 15 if narrow in ("u4", "nf4") else 255
        codes = rng.integers(0, top + 1, (rows, groups, group_size))
    else:
        codes = rng.integers(-8, 8, (rows, groups, group_size))
    zp = None if narrow == "nf4" else rng.integers(0, 8, (rows, groups, 1))  # nf4: symmetric
    scale = rng.uniform(0.001, 0.1, (rows, groups, 1)).astype(et_table.from_name(wide).dtype)
    return codes, zp, scale


def _model(narrow, wide):
    codes, zp, scale = _parts(narrow, wide)
    et = et_table.from_name(narrow)
    b = ModelBuilder("decompress")
    weights = b.constant(codes, narrow) if narrow == "nf4" else \
        b.constant(codes.astype(et.dtype), narrow)
    w = b.op("Convert", weights, destination_type=wide)
    if zp is not None:
        zpc = b.constant(zp.astype(et.dtype), narrow)
        w = b.op("Subtract", w, b.op("Convert", zpc, destination_type=wide))
    b.result(b.op("Multiply", w, b.constant(scale), name="weights"))
    return b.build()


@pytest.mark.parametrize("narrow,wide", [c for c in CASES if c[0] != "nf4"])
def test_matches_a_float64_computation_rounded_once(narrow, wide):
    out = irexec.compile_model(_model(narrow, wide))({})["weights"]
    codes, zp, scale = _parts(narrow, wide)
    # (code - zero point) * scale is exact in float64 for these small integers: round once
    expected = ((codes - zp) * scale.astype(np.float64)).astype(et_table.from_name(wide).dtype)
    assert out.dtype == expected.dtype and np.array_equal(out, expected)


@pytest.mark.parametrize("narrow,wide", CASES)
def test_bit_exact_with_openvino(narrow, wide, tmp_path):
    ov = pytest.importorskip("openvino")
    from tests.conformance.oracle import run_openvino, same_bits

    xml = tmp_path / "m.xml"
    irexec.save_model(_model(narrow, wide), xml)
    ours = irexec.compile_model(irexec.read_model(xml))({})
    theirs = run_openvino(ov, xml, {}, list(ours))
    for name in ours:
        assert same_bits(ours[name], theirs[name]), (narrow, wide)
