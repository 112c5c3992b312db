"""OpenVINO's ``openvino.preprocess``: pre- and post-processing written into the model as
ordinary layers (Convert, Transpose, Interpolate, Subtract, Divide, Gather, NV12toRGB ...), so
``irexec.save_model`` writes them and OpenVINO reads the result.

    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_element_type(Type.u8).set_layout(Layout("NHWC"))
    ppp.input().model().set_layout(Layout("NCHW"))
    ppp.input().preprocess().convert_element_type(Type.f32).mean([0.5] * 3).scale(255.0)
    model = ppp.build()
"""

from irexec.preprocess.processor import (
    ColorFormat, InputInfo, InputModelInfo, InputTensorInfo, OutputInfo, OutputModelInfo,
    OutputTensorInfo, PaddingMode, PostProcessSteps, PrePostProcessor, PreProcessSteps,
    ResizeAlgorithm)

__all__ = [
    "ColorFormat", "InputInfo", "InputModelInfo", "InputTensorInfo", "OutputInfo",
    "OutputModelInfo", "OutputTensorInfo", "PaddingMode", "PostProcessSteps", "PrePostProcessor",
    "PreProcessSteps", "ResizeAlgorithm",
]
