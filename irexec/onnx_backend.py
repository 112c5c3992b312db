"""An ONNX backend (``onnx.backend.base.Backend``) running models with irexec, so that ONNX's own
backend tests run against irexec::

    import onnx.backend.test
    import irexec.onnx_backend
    globals().update(onnx.backend.test.BackendTest(irexec.onnx_backend, __name__)
                     .include(r"^test_reversesequence_").test_cases)

The one module besides ``io/`` that imports onnx (it speaks ONNX's backend API). Models are read
by ``io/onnx_reader.py`` into the same ``ir.Model`` as every other model.
"""

from __future__ import annotations

import numpy as np
from onnx.backend.base import Backend, BackendRep

import irexec


def onnx_opset() -> int:
    """The newest ai.onnx opset the installed onnx package knows."""
    import onnx.defs

    return onnx.defs.onnx_opset_version()


class IrexecRep(BackendRep):
    """A prepared model: run it with a list (in graph-input order) or a dict of arrays."""

    def __init__(self, model):
        self.model = model
        self.compiled = irexec.compile_model(model)

    def run(self, inputs, **kwargs):
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        if not isinstance(inputs, dict):
            names = [p.name for p in self.model.parameters]
            inputs = dict(zip(names, inputs))
        outputs = self.compiled(inputs)
        return tuple(outputs[self.model.output_name(r)] for r in self.model.results)


class IrexecBackend(Backend):
    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs) -> bool:
        try:
            irexec.read_model(model)
        except irexec.IRError:
            return False
        return True

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs) -> IrexecRep:
        super().prepare(model, device, **kwargs)
        return IrexecRep(irexec.read_model(model))

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device: str = "CPU", outputs_info=None, **kwargs):
        """Run one NodeProto on a list of arrays (one per node input, in order)."""
        from onnx import helper

        super().run_node(node, inputs, device)
        opset = kwargs.get("opset_version") or onnx_opset()
        graph = helper.make_graph(
            [node], "run_node",
            [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(
                np.asarray(x).dtype), np.shape(x)) for name, x in zip(node.input, inputs)],
            [helper.make_empty_tensor_value_info(name) for name in node.output])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        # Not through prepare: ONNX's checker wants output types, which irexec infers itself.
        return IrexecRep(irexec.read_model(model)).run([np.asarray(x) for x in inputs])

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


prepare = IrexecBackend.prepare
run_model = IrexecBackend.run_model
run_node = IrexecBackend.run_node
supports_device = IrexecBackend.supports_device
is_compatible = IrexecBackend.is_compatible
