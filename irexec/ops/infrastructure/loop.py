"""Loop-5: run a body while a trip count and an execution condition allow; the body may say
when to stop, read the current iteration, and carry values along back edges."""

import numpy as np

from irexec.ops.infrastructure import subgraph
from irexec.ops.domains import SmallInts
from irexec.ops.spec import register
from irexec.ops.spec import BOOLEAN, SCALAR_OR_VECTOR, Input, Op, OpSpec, Output, TypeSet
from irexec.ops.spec import TensorType


def _scalar(value):
    return None if value is None or np.size(value) != 1 else value.reshape(-1)[0]


@register
class Loop(Op):
    spec = OpSpec(
        type="Loop",
        since=5,
        inputs=(
            Input("trip_count", TypeSet(("i32", "i64")), SCALAR_OR_VECTOR,
                  domain=SmallInts(0, low=0, high=4),
                  doc="the most iterations to run; -1 for no limit (generated inputs: 0 to 4)"),
            Input("execution_condition", BOOLEAN, SCALAR_OR_VECTOR,
                  doc="whether to run the first iteration at all"),
            Input("inputs", variadic=0, doc="mapped onto body Parameters by the port map"),
        ),
        outputs=(Output("outputs", "the last iteration's value of a body Result, or every "
                                   "iteration's concatenated", variadic=True),),
        bodies=("body",),
        doc="Runs its body repeatedly, as long as the trip count and the execution condition "
            "(the body's own after each iteration) allow.",
    )

    @staticmethod
    def infer(ctx):
        body = ctx.node.bodies["body"]
        pos = subgraph.positions(ctx.node.inputs)
        params, count = {}, None
        trip, go = _scalar(ctx.input_value(0)), _scalar(ctx.input_value(1))
        if go is not None and not bool(go):
            count = 0
        elif trip is not None and int(trip) >= 0:
            count = int(trip)
        for m in body.inputs:
            if m.purpose == "current_iteration":
                param = body.model.by_id[m.internal]
                if param.broken or not {"element_type", "shape"} <= param.attrs.keys():
                    ctx.stop()  # its own problem is reported
                params[m.internal] = TensorType(param.attrs["element_type"],
                                                param.attrs["shape"])
                continue
            t = ctx.input_type(pos[m.external])
            if m.axis is not None:
                t, n = subgraph.sliced_type(t, m)
                count = n if count is None or n is None else min(count, n)
            params[m.internal] = t
        # Unless the body's condition is a constant true, it may stop any time.
        if count != 0 and not subgraph.condition_is_constant(body):
            count = None
        elif count is None and trip is not None and int(trip) < 0:
            # No trip count, no slice, and a body that never says stop: it never ends.
            subgraph.check_count(None, "the Loop")
        return subgraph.infer_iterated(ctx, body, params, count)

    @staticmethod
    def kernel(trip_count, execution_condition, *inputs, bodies):
        trip = int(trip_count.reshape(-1)[0])
        run = bodies["body"]
        arrays = (trip_count, execution_condition, *inputs)
        return subgraph.run_iterations(arrays, run, trip if trip >= 0 else None,
                                       bool(execution_condition.reshape(-1)[0]), loop=True)
