"""If-8: run one of two bodies, chosen by a boolean condition; outputs come from the chosen
body's Results through its port map. When the condition is not known before running, each
output's type is what both branches agree on."""

import numpy as np

from irexec.diagnostics.codes import ERROR, Code
from irexec.ops.infrastructure import subgraph
from irexec.ops.spec import register
from irexec.ops.spec import BOOLEAN, SCALAR_OR_VECTOR, Input, Op, OpSpec, Output, TensorType

BRANCHES_DIFFER = Code("IR360", "if-branches-differ", ERROR,
                       "make both bodies of the If give each output the same element type")


@register
class If(Op):
    spec = OpSpec(
        type="If",
        since=8,
        inputs=(
            Input("cond", BOOLEAN, SCALAR_OR_VECTOR, doc="which body runs: then_body when true"),
            Input("inputs", variadic=0, doc="mapped onto each body's Parameters by its port map"),
        ),
        outputs=(Output("outputs", "the chosen body's Results, through its port map",
                        variadic=True),),
        bodies=("then_body", "else_body"),
        codes=(BRANCHES_DIFFER,),
        doc="Runs then_body or else_body, as the condition says.",
    )

    @staticmethod
    def infer(ctx):
        pos = subgraph.positions(ctx.node.inputs)
        out_pos = subgraph.positions(ctx.node.outputs)
        cond = ctx.input_value(0)
        names = ("then_body", "else_body")
        if cond is not None and np.size(cond) == 1:
            names = ("then_body",) if bool(cond.reshape(-1)[0]) else ("else_body",)
        branches = []
        for name in names:
            body = ctx.node.bodies[name]
            params = {m.internal: ctx.input_type(pos[m.external]) for m in body.inputs}
            results = ctx.infer_body(name, params)
            if results is None:
                ctx.stop()
            outputs = [None] * len(ctx.node.outputs)
            for m in body.outputs:
                outputs[out_pos[m.external]] = results[m.internal]
            missing = [p.port_id for p, t in zip(ctx.node.outputs, outputs) if t is None]
            if missing:
                ctx.error("IR110", f"output port {missing[0]} is not in {name}'s port map")
            branches.append(outputs)
        if len(branches) == 1:
            return branches[0]
        merged = []
        for i, (a, b) in enumerate(zip(*branches)):
            if a.element_type != b.element_type and not (a.element_type.is_dynamic
                                                          or b.element_type.is_dynamic):
                ctx.error("IR360", f"output {i} is {a.element_type} from then_body but "
                                   f"{b.element_type} from else_body")
            merged.append(TensorType(a.element_type, subgraph.union(a.shape, b.shape)))
        return merged

    @staticmethod
    def kernel(cond, *inputs, bodies):
        run = bodies["then_body" if bool(cond.reshape(-1)[0]) else "else_body"]
        arrays = (cond, *inputs)
        given = {m.internal: arrays[run.input_position[m.external]] for m in run.body.inputs}
        results = run(given)
        outputs = [None] * run.num_outputs
        for m in run.body.outputs:
            out = results[m.internal]
            # an input's array, or one another port returns already (two ports mapped to one
            # body Result), is copied: each output is the caller's alone
            outputs[run.output_position[m.external]] = np.array(out, copy=True) \
                if any(out is a for a in arrays) or any(out is o for o in outputs) else out
        return tuple(outputs) if len(outputs) != 1 else outputs[0]
