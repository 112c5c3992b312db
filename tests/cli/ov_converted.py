"""An IR written by OpenVINO's own converter: an ONNX ReverseSequence chain (ReverseSequence ->
Identity -> Cast, tests/onnx/models.py) through ``openvino.convert_model`` and
``openvino.save_model``. Each command's tests run on it besides the samples.
"""

from __future__ import annotations

import pytest


def write_converted(folder) -> str:
    """Convert tests/onnx/models.chain_model with OpenVINO and save it as IR in ``folder``."""
    ov = pytest.importorskip("openvino")
    pytest.importorskip("onnx")
    import onnx

    from tests.onnx.models import chain_model

    onnx_path = folder / "chain.onnx"
    onnx.save(chain_model(), onnx_path)
    xml = folder / "ov_chain.xml"
    ov.save_model(ov.convert_model(str(onnx_path)), str(xml), compress_to_fp16=False)
    return str(xml)


@pytest.fixture(scope="session")
def ov_converted(tmp_path_factory) -> str:
    """The path of the converted model's .xml (its .bin beside it)."""
    return write_converted(tmp_path_factory.mktemp("ov_converted"))
