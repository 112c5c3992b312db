"""``tensor_iterator``, ``loop`` and ``if_op`` of ``irexec.opsetN``: layers holding bodies,
built call by call as OpenVINO's Python API builds them. Each model runs against numpy, saves,
validates clean, and (with OpenVINO) runs in OpenVINO to irexec's results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irexec
from irexec import opset13 as ops
from irexec.opsets.graph import ArgumentError
from tests.opsets.saving import save_exact

ROOT = Path(__file__).resolve().parents[2]
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}


def check_file(model, feeds: dict, ours: list, tmp_path) -> None:
    """Saved, validated clean, read back to the same results; OpenVINO too where installed."""
    xml = tmp_path / "model.xml"
    save_exact(model, xml)
    run = subprocess.run([sys.executable, "-m", "irexec", "validate", str(xml)],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0 and "0 errors, 0 warnings" in run.stdout, run.stdout + run.stderr
    again = list(irexec.compile_model(irexec.read_model(xml))(feeds).values())
    for a, b in zip(ours, again):
        np.testing.assert_array_equal(a, b)
    try:
        import openvino as ov
    except ImportError:
        return
    theirs = ov.Core().compile_model(str(xml), "CPU", OV_CONFIG)(list(feeds.values()))
    for i, a in enumerate(ours):
        np.testing.assert_allclose(a, theirs[i], rtol=1e-6, atol=1e-6)


def cumulative_body():
    xp = ops.parameter([2, 1, 3], np.float32, name="xp")
    hp = ops.parameter([2, 3], np.float32, name="hp")
    h = ops.add(hp, ops.squeeze(xp, np.array([1], np.int64)))
    total = ops.result(h)
    step = ops.result(ops.unsqueeze(h, np.array([1], np.int64)))
    return irexec.Model([total, step], [xp, hp], "body"), xp, hp, total, step


def test_tensor_iterator_slices_merges_and_concatenates(tmp_path):
    x = ops.parameter([2, 4, 3], np.float32, name="x")
    h0 = ops.parameter([2, 3], np.float32, name="h0")
    body, xp, hp, total, step = cumulative_body()
    ti = ops.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(xp, x, 0, 1, 1, -1, 1)
    ti.set_merged_input(hp, h0, total)
    last = ti.get_iter_value(total, -1)
    every = ti.get_concatenated_slices(step, 0, 1, 1, -1, 1)
    assert str(every.partial_shape) == "[2,4,3]"
    model = irexec.Model([last, every], [x, h0], "ti")
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((2, 4, 3)).astype(np.float32),
             "h0": rng.standard_normal((2, 3)).astype(np.float32)}
    ours = list(irexec.compile_model(model)(feeds).values())
    running = feeds["h0"][:, None, :] + np.cumsum(feeds["x"], 1)
    np.testing.assert_allclose(ours[0], running[:, -1], rtol=1e-6)
    np.testing.assert_allclose(ours[1], running, rtol=1e-6)
    check_file(model, feeds, ours, tmp_path)


def test_tensor_iterator_backwards_over_the_sequence(tmp_path):
    x = ops.parameter([2, 4, 3], np.float32, name="x")
    h0 = ops.parameter([2, 3], np.float32, name="h0")
    body, xp, hp, total, step = cumulative_body()
    ti = irexec.opset1.tensor_iterator()
    ti.set_function(body)
    ti.set_merged_input(hp, h0, total)  # inputs in another order than the body's
    ti.set_sliced_input(xp, x, -1, -1, 1, 0, 1)
    every = ti.get_concatenated_slices(step, -1, -1, 1, 0, 1)
    model = irexec.Model([every], [x, h0], "reverse")
    feeds = {"x": np.arange(24, dtype=np.float32).reshape(2, 4, 3),
             "h0": np.zeros((2, 3), np.float32)}
    ours = list(irexec.compile_model(model)(feeds).values())
    expected = np.cumsum(feeds["x"][:, ::-1], 1)[:, ::-1]
    np.testing.assert_array_equal(ours[0], expected)
    check_file(model, feeds, ours, tmp_path)


def test_loop_with_a_trip_count_a_condition_and_the_iteration_number(tmp_path):
    start = ops.parameter([3], np.float32, name="start")
    limit = ops.parameter([], np.float32, name="limit")
    # body: value += iteration number; go on while the sum stays below the limit
    i = ops.parameter([], np.int64, name="i")
    value = ops.parameter([3], np.float32, name="value")
    bound = ops.parameter([], np.float32, name="bound")
    nxt = ops.add(value, ops.convert(i, "f32"))
    keep_going = ops.result(ops.less(ops.reduce_sum(nxt, np.array([0], np.int64)), bound))
    out = ops.result(nxt)
    body = irexec.Model([keep_going, out], [i, value, bound], "body")
    loop = ops.loop(10, True)
    loop.set_function(body)
    loop.set_special_body_ports([0, 0])
    loop.set_merged_input(value, start, out)
    loop.set_invariant_input(bound, limit)
    final = loop.get_iter_value(out, -1)
    model = irexec.Model([final], [start, limit], "loop")
    feeds = {"start": np.array([1, 2, 3], np.float32), "limit": np.array(40, np.float32)}
    ours = list(irexec.compile_model(model)(feeds).values())
    expected, k = feeds["start"].copy(), 0
    while k < 10:
        expected = expected + k
        k += 1
        if not expected.sum() < 40:
            break
    np.testing.assert_array_equal(ours[0], expected)
    check_file(model, feeds, ours, tmp_path)


def test_if_runs_the_branch_the_condition_names(tmp_path):
    cond = ops.parameter([], np.bool_, name="cond")
    x = ops.parameter([2, 2], np.float32, name="x")
    tx = ops.parameter([2, 2], np.float32, name="tx")
    then_out = ops.result(ops.multiply(tx, np.float32(2)))
    then_body = irexec.Model([then_out], [tx], "then")
    ex = ops.parameter([2, 2], np.float32, name="ex")
    else_out = ops.result(ops.negative(ex))
    else_body = irexec.Model([else_out], [ex], "else")
    branch = ops.if_op(cond)
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(x.output(0), tx, ex)
    out = branch.set_output(then_out, else_out)
    model = irexec.Model([out], [cond, x], "if")
    value = np.array([[1, -2], [3, 4]], np.float32)
    compiled = irexec.compile_model(model)
    for flag, expected in ((True, value * 2), (False, -value)):
        feeds = {"cond": np.array(flag), "x": value}
        ours = list(compiled(feeds).values())
        np.testing.assert_array_equal(ours[0], expected)
    check_file(model, feeds, ours, tmp_path)


def test_bodies_are_checked_where_they_are_given():
    body, xp, hp, total, step = cumulative_body()
    ti = ops.tensor_iterator()
    with pytest.raises(ArgumentError, match="set the body first"):
        ti.set_invariant_input(xp, np.zeros((2, 1, 3), np.float32))
    with pytest.raises(ArgumentError, match="a body is an irexec Model"):
        ti.set_body("body")
    ti.set_body(body)
    stray = ops.parameter([2, 3], np.float32)
    with pytest.raises(ArgumentError, match="is not one of the body's"):
        ti.set_invariant_input(stray, np.zeros((2, 3), np.float32))
    with pytest.raises(ArgumentError, match="not a Result of the body"):
        ti.get_iter_value(stray)
    ti.set_invariant_input(hp, np.zeros((2, 3), np.float64))  # f64 where the body takes f32
    ti.set_invariant_input(xp, np.zeros((2, 1, 3), np.float32))
    with pytest.raises(irexec.IRError):
        ti.get_iter_value(total)
    assert ti.outputs == []  # the refused output is not left behind
