"""Writes the sub-graph models in this folder with OpenVINO's Python API (run it with OpenVINO
installed; the files are committed so the tests that read them need no OpenVINO)."""

import numpy as np
import openvino as ov
import openvino.opset8 as o8


def loop_concat():
    """A Loop that grows an accumulator by the invariant x each iteration (a back edge whose
    shape changes), stops through the trip count, and reports the current iteration."""
    x = o8.parameter([1, 3], np.float32, name="x")
    acc0 = o8.parameter([1, 3], np.float32, name="acc0")
    trip = o8.parameter([], np.int64, name="trip")
    it = o8.parameter([], np.int64, name="it")
    bacc = o8.parameter([-1, 3], np.float32, name="bacc")
    bx = o8.parameter([1, 3], np.float32, name="bx")
    grown = o8.concat([bacc, bx], 0, name="grown")
    its = o8.convert(it, "f32", name="its")
    go = o8.constant(True, name="go")
    body = ov.Model([go.output(0), grown.output(0), its.output(0)], [it, bacc, bx], "body")
    loop = o8.loop(trip, o8.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([0, 0])
    loop.set_merged_input(bacc, acc0.output(0), grown.output(0))
    loop.set_invariant_input(bx, x.output(0))
    last = loop.get_iter_value(grown.output(0), -1)
    iters = loop.get_concatenated_slices(its.output(0), 0, 1, 1, -1, 0)
    return ov.Model([last, iters], [x, acc0, trip], "loop_concat")


def tensor_iterator_reverse():
    """A TensorIterator over axis 1 of X (forward) and of Y (backward), each step reversing the
    leading elements of its slice's last axis (3 in batch 0, 2 in batch 1); the steps concatenated back, and the last one alone."""
    X = o8.parameter([2, 4, 3], np.float32, name="X")
    bX = o8.parameter([2, 1, 3], np.float32, name="bX")
    flipped = o8.reverse_sequence(bX, o8.constant(np.array([3, 2], np.int32)), 0, 2)
    body = ov.Model([flipped.output(0)], [bX], "body")
    ti = o8.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(bX, X.output(0), -1, -1, 1, 0, 1)  # start, stride, part, end, axis
    every = ti.get_concatenated_slices(flipped.output(0), -1, -1, 1, 0, 1)
    last = ti.get_iter_value(flipped.output(0), -1)
    return ov.Model([every, last], [X], "tensor_iterator_reverse")


def if_branches():
    """If: then_body reverses sequences of the input, else_body passes it through a Concat."""
    c = o8.parameter([], np.bool_, name="c")
    a = o8.parameter([2, 3], np.float32, name="a")
    ta = o8.parameter([2, 3], np.float32, name="ta")
    tr = o8.result(o8.reverse_sequence(ta, o8.constant(np.array([2, 3], np.int64)), 0, 1))
    ea = o8.parameter([2, 3], np.float32, name="ea")
    er = o8.result(o8.concat([ea], 1))
    iff = o8.if_op(c)
    iff.set_then_body(ov.Model([tr], [ta], "then"))
    iff.set_else_body(ov.Model([er], [ea], "else"))
    iff.set_input(a.output(0), ta, ea)
    out = iff.set_output(tr, er)
    return ov.Model([out], [c, a], "if_branches")




def stateful():
    """ReadValue/Assign: each call returns the previous call's x (zeros the first time) followed
    by this call's x, and stores x for the next call."""
    from openvino import op
    import openvino.opset6 as o6

    x = o6.parameter([2], np.float32, name="x")
    info = op.util.VariableInfo()
    info.variable_id, info.data_shape, info.data_type = "prev", ov.PartialShape([2]), ov.Type.f32
    variable = op.util.Variable(info)
    previous = o6.read_value(o6.constant(np.zeros(2, np.float32)), variable)
    both = o6.concat([previous, x], 0)
    store = o6.assign(x, variable)
    return ov.Model([o6.result(both)], [store], [x], "stateful")


def loop_early_exit():
    """A Loop with no trip count limit (-1) whose body stops it: it doubles x while the doubled
    value stays below the limit; the iterations' values are concatenated."""
    x = o8.parameter([1], np.float32, name="x")
    limit = o8.parameter([], np.float32, name="limit")
    bx = o8.parameter([1], np.float32, name="bx")
    blimit = o8.parameter([], np.float32, name="blimit")
    doubled = o8.multiply(bx, o8.constant(np.float32(2)))
    go = o8.less(doubled, blimit)
    body = ov.Model([go.output(0), doubled.output(0)], [bx, blimit], "body")
    loop = o8.loop(o8.constant(np.int64(-1)), o8.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(bx, x.output(0), doubled.output(0))
    loop.set_invariant_input(blimit, limit.output(0))
    last = loop.get_iter_value(doubled.output(0), -1)
    every = loop.get_concatenated_slices(doubled.output(0), 0, 1, 1, -1, 0)
    return ov.Model([last, every], [x, limit], "loop_early_exit")


def nested_loops():
    """A Loop of 2 iterations whose body is a Loop of 3 that adds 1 each time: x + 6, and the
    outer iterations' values concatenated ([x + 3, x + 6])."""
    x = o8.parameter([1], np.float32, name="x")
    inner_v = o8.parameter([1], np.float32, name="inner_v")
    added = o8.add(inner_v, o8.constant(np.array([1], np.float32)), name="added")
    inner_body = ov.Model([o8.constant(True).output(0), added.output(0)], [inner_v], "inner")
    outer_v = o8.parameter([1], np.float32, name="outer_v")
    inner = o8.loop(o8.constant(np.int64(3)), o8.constant(True))
    inner.set_friendly_name("inner_loop")
    inner.set_function(inner_body)
    inner.set_special_body_ports([-1, 0])
    inner.set_merged_input(inner_v, outer_v.output(0), added.output(0))
    inner_out = inner.get_iter_value(added.output(0), -1)
    outer_body = ov.Model([o8.constant(True).output(0), inner_out], [outer_v], "outer")
    outer = o8.loop(o8.constant(np.int64(2)), o8.constant(True))
    outer.set_friendly_name("outer_loop")
    outer.set_function(outer_body)
    outer.set_special_body_ports([-1, 0])
    outer.set_merged_input(outer_v, x.output(0), outer_body.outputs[1])
    last = outer.get_iter_value(outer_body.outputs[1], -1)
    every = outer.get_concatenated_slices(outer_body.outputs[1], 0, 1, 1, -1, 0)
    return ov.Model([last, every], [x], "nested_loops")


def loop_every_port():
    """A Loop with every kind of port: a trip count and a first condition given as inputs; a
    back edge of bounded shape [1..4,3] (x, then y); a sliced input (seq, one row per
    iteration: at most 6); invariant inputs (limit, d); the current iteration; a body
    condition (the sum of y below limit); y's last value, the sums and the iteration
    numbers concatenated. The body divides the iteration by d (integers: d = 0 is a division by zero
    inside the body)."""
    trip = o8.parameter([], np.int64, name="trip")
    go = o8.parameter([], np.bool_, name="go")
    x = o8.parameter([ov.Dimension(1, 4), 3], np.float32, name="x")
    seq = o8.parameter([6, 3], np.float32, name="seq")
    limit = o8.parameter([], np.float32, name="limit")
    d = o8.parameter([], np.int64, name="d")
    it = o8.parameter([], np.int64, name="it")
    bx = o8.parameter([ov.Dimension(1, 4), 3], np.float32, name="bx")
    bs = o8.parameter([1, 3], np.float32, name="bs")
    blimit = o8.parameter([], np.float32, name="blimit")
    bd = o8.parameter([], np.int64, name="bd")
    share = o8.convert(o8.divide(it, bd), "f32", name="share")
    y = o8.add(o8.add(o8.multiply(bx, o8.constant(np.float32(0.5))), bs), share, name="y")
    total = o8.reduce_sum(y, o8.constant(np.array([0, 1], np.int64)), name="total")
    more = o8.less(total, blimit, name="more")
    its = o8.convert(it, "f32", name="its")
    body = ov.Model([more.output(0), y.output(0), total.output(0), its.output(0)],
                    [it, bx, bs, blimit, bd], "body")
    loop = o8.loop(trip, go)
    loop.set_function(body)
    loop.set_special_body_ports([0, 0])
    loop.set_merged_input(bx, x.output(0), y.output(0))
    loop.set_sliced_input(bs, seq.output(0), 0, 1, 1, -1, 0)
    loop.set_invariant_input(blimit, limit.output(0))
    loop.set_invariant_input(bd, d.output(0))
    last = loop.get_iter_value(y.output(0), -1)
    every = loop.get_concatenated_slices(total.output(0), 0, 1, 1, -1, 0)
    iters = loop.get_concatenated_slices(its.output(0), 0, 1, 1, -1, 0)
    return ov.Model([last, every, iters], [trip, go, x, seq, limit, d], "loop_every_port")


def tensor_iterator_cell():
    """A TensorIterator running a plain recurrent cell over 5 time steps of seq [5, 1, 128]:
    h = tanh(x_t W + h R), h from h0. W and R ([128, 128], 64 KiB each) are Broadcasts of a
    scalar, so the file stays small and the plan folds them into constants; every h and the
    last one are the outputs."""
    seq = o8.parameter([5, 1, 128], np.float32, name="seq")
    h0 = o8.parameter([1, 128], np.float32, name="h0")
    bx = o8.parameter([1, 1, 128], np.float32, name="bx")
    bh = o8.parameter([1, 128], np.float32, name="bh")
    w = o8.broadcast(o8.constant(np.float32(0.01)), o8.constant(np.array([128, 128])))
    r = o8.broadcast(o8.constant(np.float32(-0.02)), o8.constant(np.array([128, 128])))
    x = o8.reshape(bx, o8.constant(np.array([1, 128])), False)
    h = o8.tanh(o8.add(o8.matmul(x, w, False, False), o8.matmul(bh, r, False, False)),
                name="h")
    body = ov.Model([h.output(0)], [bx, bh], "body")
    ti = o8.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(bx, seq.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(bh, h0.output(0), h.output(0))
    every = ti.get_concatenated_slices(h.output(0), 0, 1, 1, -1, 0)
    last = ti.get_iter_value(h.output(0), -1)
    return ov.Model([every, last], [seq, h0], "tensor_iterator_cell")


if __name__ == "__main__":
    for make in (loop_concat, tensor_iterator_reverse, if_branches, stateful, loop_early_exit,
                 nested_loops, loop_every_port, tensor_iterator_cell):
        ov.save_model(make(), f"{make.__name__}.xml", compress_to_fp16=False)
