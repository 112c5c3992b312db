"""Small IR files for the validate tests, each with a known set of problems.

``write(tmp_path, name, xml)`` writes ``name.xml`` and an empty ``name.bin``; these models hold
no Const, so the .bin is never read.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers_ir import layer, net, parameter, result, write_ir


def _convert(id, name, destination_type, precision):
    return layer(id, name, "Convert", inputs=[[2, 3]], outputs=[[2, 3]],
                 data={"destination_type": destination_type}, precision=precision)


# Parameter -> Result: nothing to report.
VALID = net([parameter(0, "x", "2,3", dims=[2, 3]), result(1, "out", [2, 3])],
            [(0, 0, 1, 0)])

# One warning only: a Convert whose output no Result uses (IR205 unused-layer).
WARNING_ONLY = net([parameter(0, "x", "2,3", dims=[2, 3]), result(1, "out", [2, 3]),
                    _convert(2, "dead", "f64", "FP64")],
                   [(0, 0, 1, 0), (0, 0, 2, 0)])

# One error (IR302: destination_type 'f17') and one warning (IR205, layer 'dead').
ERROR_AND_WARNING = net([parameter(0, "x", "2,3", dims=[2, 3]), _convert(1, "cast", "f17", "FP16"),
                         result(2, "out", [2, 3]), _convert(3, "dead", "f64", "FP64")],
                        [(0, 0, 1, 0), (1, 1, 2, 0), (0, 0, 3, 0)])

MALFORMED = '<?xml version="1.0"?>\n<net name="m" version="11">\n  <layers>\n  </edges>\n</net>\n'

NOT_IR = '<?xml version="1.0"?>\n<project>\n  <modelVersion>4.0.0</modelVersion>\n</project>\n'


def write(tmp_path, name: str, xml: str) -> Path:
    return write_ir(tmp_path, xml, name=name)
