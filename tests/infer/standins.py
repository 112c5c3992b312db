"""Small stand-ins for ops other branches write (Gather, Reshape, Unsqueeze, Add, Multiply,
Divide, Broadcast), registered by the ``standins`` fixture only where the real op is missing,
and removed afterwards: the value-propagation tests then run against the real ops once they are
merged, and against these meanwhile. Each follows the spec for the cases the tests use."""

from __future__ import annotations

import numpy as np
import pytest

from irexec.ir.shape import Dimension, PartialShape
from irexec.ops import bounds as bounds_rules
from irexec.ops.rules import AUTO_BROADCAST
from irexec.ops.spec import ANY, NUMERIC, Attr, Input, Op, OpSpec, Output, TensorType, TypeVar

T = TypeVar("T")
N = TypeVar("N", NUMERIC)


class Gather8(Op):
    spec = OpSpec(type="Gather", since=8, attrs=(Attr("batch_dims", "int", default=0),),
                  inputs=(Input("data", T), Input("indices"), Input("axis")),
                  outputs=(Output("output", type=T),), exact=True)

    @staticmethod
    def infer(ctx):
        data, idx = ctx.input_shape(0), ctx.input_shape(1)
        axis = int(ctx.input_value(2)) % len(data)
        dims = data.dims[:axis] + idx.dims + data.dims[axis + 1:]
        return [TensorType(ctx.type_var("T"), PartialShape(dims))]

    @staticmethod
    def kernel(data, indices, axis, *, batch_dims):
        return np.take(data, indices, axis=int(axis))


class Unsqueeze1(Op):
    spec = OpSpec(type="Unsqueeze", since=1, inputs=(Input("data", T), Input("axes")),
                  outputs=(Output("output", type=T),), exact=True)

    @staticmethod
    def infer(ctx):
        dims = list(ctx.input_shape(0).dims)
        for a in sorted(int(v) for v in np.asarray(ctx.input_value(1)).reshape(-1)):
            dims.insert(a, Dimension.static(1))
        return [TensorType(ctx.type_var("T"), PartialShape(dims))]

    @staticmethod
    def kernel(data, axes):
        return np.expand_dims(data, tuple(int(a) for a in axes.reshape(-1)))


class Reshape1(Op):
    spec = OpSpec(type="Reshape", since=1, attrs=(Attr("special_zero", "bool"),),
                  inputs=(Input("data", ANY), Input("shape")), outputs=(Output("output"),),
                  exact=True)

    @staticmethod
    def infer(ctx):
        data = ctx.input_shape(0)
        got = ctx.input_bounds(1)
        if got is None:
            return [TensorType(ctx.input_type(0).element_type,
                               ctx.input_as_shape(1) or PartialShape.dynamic())]
        lo, hi = got
        dims = bounds_rules.as_dims(got)
        minus = None
        for i, (a, b) in enumerate(zip(lo.tolist(), hi.tolist())):
            if a == b == 0 and ctx.attrs["special_zero"]:
                dims[i] = data[i]
            elif a == b == -1:
                minus = i
        if minus is not None:
            known = [d.min for j, d in enumerate(dims) if j != minus]
            total = [d.min for d in data] if data.is_static else None
            if total is not None and all(d.is_static for j, d in enumerate(dims) if j != minus):
                dims[minus] = Dimension.static(int(np.prod(total)) // int(np.prod(known)))
            else:
                dims[minus] = Dimension.dynamic()
        return [TensorType(ctx.input_type(0).element_type, PartialShape(dims))]

    @staticmethod
    def kernel(data, shape, *, special_zero):
        target = [int(s) for s in shape]
        if special_zero:
            target = [data.shape[i] if s == 0 else s for i, s in enumerate(target)]
        return data.reshape(target)


class Broadcast3(Op):
    spec = OpSpec(type="Broadcast", since=3,
                  attrs=(Attr("mode", "enum", default="numpy", values=("numpy",)),),
                  inputs=(Input("data", T), Input("target_shape")),
                  outputs=(Output("output", type=T),), exact=True)

    @staticmethod
    def infer(ctx):
        from irexec.ir import shape_rules
        target = ctx.input_as_shape(1) or PartialShape.dynamic()
        return [TensorType(ctx.type_var("T"),
                           shape_rules.broadcast_numpy(ctx.input_shape(0), target))]

    @staticmethod
    def kernel(data, target_shape, *, mode):
        return np.broadcast_to(data, np.broadcast_shapes(data.shape, tuple(target_shape)))


def _binary(name, fn, extra=()):
    class Binary(Op):
        spec = OpSpec(type=name, since=1, inputs=(Input("a", N), Input("b", N)),
                      attrs=(AUTO_BROADCAST, *extra), outputs=(Output("output", type=N),))

        @staticmethod
        def infer(ctx):
            from irexec.ir import shape_rules
            return [TensorType(ctx.type_var("N"), shape_rules.broadcast(ctx.input_shapes()))]

        kernel = staticmethod(fn)
    Binary.__name__ = name
    return Binary


STANDINS = (Gather8, Unsqueeze1, Reshape1, Broadcast3,
            _binary("Add", lambda a, b, **_: a + b),
            _binary("Multiply", lambda a, b, **_: a * b),
            _binary("Divide", lambda a, b, **_: a // b,
                    (Attr("m_pythondiv", "bool", default=True),)))


@pytest.fixture
def standins():
    """Register the stand-ins whose type no branch has registered yet; restore the registry."""
    from irexec.ops import registry

    with registry.sandbox():
        for op in STANDINS:
            if not registry.families_of(op.spec.type):
                registry.register(op)
        yield
