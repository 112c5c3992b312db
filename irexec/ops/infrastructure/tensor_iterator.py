"""TensorIterator-1: run a body once per slice of the sliced inputs, carrying values from one
iteration to the next along back edges (irexec/ops/infrastructure/subgraph.py has the rules)."""

from irexec.ops.infrastructure import subgraph
from irexec.ops.spec import register
from irexec.ops.spec import Input, Op, OpSpec, Output


@register
class TensorIterator(Op):
    spec = OpSpec(
        type="TensorIterator",
        since=1,
        inputs=(Input("inputs", variadic=0, doc="mapped onto body Parameters by the port map: "
                                                "sliced, merged (with a back edge) or invariant"),),
        outputs=(Output("outputs", "the last iteration's value of a body Result, or every "
                                   "iteration's concatenated", variadic=True),),
        bodies=("body",),
        doc="Runs its body once per part of its sliced inputs (a recurrent network's cell "
            "over time steps).",
    )

    @staticmethod
    def infer(ctx):
        body = ctx.node.bodies["body"]
        pos = subgraph.positions(ctx.node.inputs)
        params, count = {}, None
        for m in body.inputs:
            t = ctx.input_type(pos[m.external])
            if m.axis is not None:
                t, n = subgraph.sliced_type(t, m)
                count = n if count is None or n is None else min(count, n)
            params[m.internal] = t
        if not any(m.axis is not None for m in body.inputs):
            concat = [m for m in body.outputs if m.axis is not None]
            if concat:
                count = abs(concat[0].end - concat[0].start) // concat[0].part_size
        return subgraph.infer_iterated(ctx, body, params, count)

    @staticmethod
    def kernel(*inputs, bodies):
        return subgraph.run_iterations(inputs, bodies["body"])
