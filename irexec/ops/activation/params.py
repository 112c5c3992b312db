"""Checks shared by the activations whose parameters come as one-element inputs (Selu,
HardSigmoid): IR321 when such an input holds more than one element."""

from irexec.diagnostics.codes import ERROR, Code

ONE_ELEMENT = Code("IR321", "one-element-parameter", ERROR,
                   "give the parameter input one element: a scalar or a 1-D tensor of size 1")


def check_one_element(ctx, indices) -> None:
    for i in indices:
        shape = ctx.input_shape(i)
        if not shape.rank_is_static:
            continue
        if len(shape) == 1 and not shape[0].contains(1):
            rule = ctx.spec.input_rule(i)
            ctx.error("IR321", f"input {i} ({rule.name}) has shape {shape}; it must hold one "
                               f"element")
