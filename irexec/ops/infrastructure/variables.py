"""ReadValue (3, 6) and Assign (3, 6): a model's state across calls. ReadValue gives a
variable's value as the last call's Assign left it, or its initial value (the input, or zeros
of the declared shape) on the first call and after ``InferRequest.reset_state()``. Variables
belong to the infer request (``compiled(...)`` uses the compiled model's own request)."""

import numpy as np

from irexec.kernels import state
from irexec.ops.spec import register
from irexec.ops.spec import Attr, Input, Op, OpSpec, Output, TensorType

VARIABLE_ID = Attr("variable_id", "string", doc="the variable's name, shared by its ReadValue "
                                                "and Assign")


def _read(init, variable_id):
    values = state.current()
    return values[variable_id] if variable_id in values else init


@register
class ReadValue3(Op):
    spec = OpSpec(
        type="ReadValue", numerics="exact", since=3, until=5, attrs=(VARIABLE_ID,),
        inputs=(Input("init_value", doc="the value before any Assign"),),
        outputs=(Output("output", "the variable's current value"),),
        doc="Reads a variable of the model's state.", variable="reads",
        folds=False)  # its value changes between calls: never a constant

    @staticmethod
    def kernel(init_value, *, variable_id):
        return _read(init_value, variable_id)


@register
class ReadValue6(Op):
    spec = OpSpec(
        type="ReadValue", numerics="exact", since=6,
        attrs=(VARIABLE_ID,
               Attr("variable_type", "element_type", dynamic_ok=True,
                    doc="the variable's element type"),
               Attr("variable_shape", "partial_shape", doc="the variable's partial shape")),
        inputs=(Input("init_value", optional=True, doc="the value before any Assign; "
                                                        "zeros of variable_shape without it"),),
        outputs=(Output("output", "the variable's current value"),),
        doc="Reads a variable of the model's state.", variable="reads",
        folds=False)  # its value changes between calls: never a constant

    @staticmethod
    def infer(ctx):
        et, shape = ctx.attrs["variable_type"], ctx.attrs["variable_shape"]
        if ctx.num_inputs and et.is_dynamic:
            et = ctx.input_type(0).element_type
        return [TensorType(et, shape)]

    @staticmethod
    def kernel(init_value=None, *, variable_id, variable_type, variable_shape):
        if init_value is None:
            dims = [d.min for d in variable_shape] if variable_shape.rank_is_static else []
            init_value = np.zeros(dims, dtype=variable_type.dtype)
        return _read(init_value, variable_id)


def _assign(new_value, *, variable_id):
    state.assign(variable_id, np.array(new_value, copy=True))  # for the next call
    return new_value


def _assign_own(new_value, *, variable_id):
    """``in_place``: the value dies here and nothing else can see it (the plan proved it):
    the variable keeps the array itself, without a copy (a KV cache of many megabytes)."""
    state.assign(variable_id, new_value)
    return new_value


@register
class Assign3(Op):
    spec = OpSpec(
        type="Assign", numerics="exact", since=3, until=5, attrs=(VARIABLE_ID,),
        inputs=(Input("new_value", doc="the variable's value for the next call"),),
        outputs=(Output("output", "new_value, passed on"),),
        role="sink", variable="writes",
        doc="Sets a variable of the model's state for the next call.", in_place=_assign_own)
    kernel = staticmethod(_assign)


@register
class Assign6(Op):
    spec = OpSpec(
        type="Assign", numerics="exact", since=6, attrs=(VARIABLE_ID,),
        inputs=(Input("new_value", doc="the variable's value for the next call"),),
        outputs=(Output("output", "new_value, passed on"),),
        role="sink", variable="writes",
        doc="Sets a variable of the model's state for the next call.", in_place=_assign_own)
    kernel = staticmethod(_assign)
