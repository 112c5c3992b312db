"""Snapshots of the three output formats for one IR file with several problems in several layers.

The reader finds more problems at once as it improves, so these snapshots are expected to change.
To regenerate them, look at the diff, then commit it:

    IREXEC_UPDATE_SNAPSHOTS=1 pytest tests/validate/test_snapshots.py

The file is checked from inside its folder under a fixed name, so the snapshots hold the relative
path ``several_problems.xml`` whatever the machine; the SARIF tool version is replaced by
``VERSION``. Whatever the snapshots say, ``test_each_problem_at_its_line`` pins the problems
this file must always produce.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from irexec.api import validate_file
from irexec.diagnostics.render import RENDERERS
from tests.helpers_ir import line_of, write_ir
from tests.validate.sarif_schema import assert_valid_sarif

SNAPSHOTS = Path(__file__).with_name("snapshots")
UPDATE = bool(os.environ.get("IREXEC_UPDATE_SNAPSHOTS"))
NAME = "several_problems"
SUFFIX = {"text": ".txt", "json": ".json", "sarif": ".sarif"}

# Each branch from 'data' to a Result holds its own problem, so one cannot hide another.
SEVERAL_PROBLEMS = """
<?xml version="1.0"?>
<net name="several_problems" version="11">
  <layers>
    <layer id="0" name="data" type="Parameter" version="opset1">
      <data shape="2,3" element_type="f32"/>
      <output>
        <port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port>
      </output>
    </layer>
    <layer id="1" name="axes" type="Const" version="opset1">
      <data element_type="i64" shape="1" offset="0" size="8"/>
      <output>
        <port id="0" precision="I64"><dim>1</dim></port>
      </output>
    </layer>
    <layer id="2" name="flip" type="Reverse" version="opset1">
      <data mode="index"/>
      <input>
        <port id="0"><dim>2</dim><dim>3</dim></port>
        <port id="1"><dim>1</dim></port>
      </input>
      <output>
        <port id="2" precision="FP32"><dim>2</dim><dim>3</dim></port>
      </output>
    </layer>
    <layer id="3" name="cast" type="Convert" version="opset1">
      <data destination_type="f17"/>
      <input>
        <port id="0"><dim>2</dim><dim>3</dim></port>
      </input>
      <output>
        <port id="1" precision="FP16"><dim>2</dim><dim>3</dim></port>
      </output>
    </layer>
    <layer id="4" name="widen" type="Convert" version="opset1">
      <data destination_type="f64"/>
      <input>
        <port id="0"><dim>2</dim><dim>3</dim></port>
      </input>
      <output>
        <port id="1" precision="FP64"><dim>2</dim><dim>7</dim></port>
      </output>
    </layer>
    <layer id="5" name="dead" type="Convert" version="opset1">
      <data destination_type="i32"/>
      <input>
        <port id="0"><dim>2</dim><dim>3</dim></port>
      </input>
      <output>
        <port id="1" precision="I32"><dim>2</dim><dim>3</dim></port>
      </output>
    </layer>
    <layer id="6" name="mystery" type="Frobnicate" version="opset1">
      <input>
        <port id="0"><dim>2</dim><dim>3</dim></port>
      </input>
      <output>
        <port id="1" precision="FP32"><dim>2</dim><dim>3</dim></port>
      </output>
    </layer>
    <layer id="7" name="out_flip" type="Result" version="opset1">
      <input>
        <port id="0"><dim>2</dim><dim>3</dim></port>
      </input>
    </layer>
    <layer id="8" name="out_cast" type="Result" version="opset1">
      <input>
        <port id="0"><dim>2</dim><dim>3</dim></port>
      </input>
    </layer>
    <layer id="9" name="out_widen" type="Result" version="opset1">
      <input>
        <port id="0"><dim>2</dim><dim>7</dim></port>
      </input>
    </layer>
    <layer id="10" name="out_mystery" type="Result" version="opset1">
      <input>
        <port id="0"><dim>2</dim><dim>3</dim></port>
      </input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
    <edge from-layer="2" from-port="2" to-layer="7" to-port="0"/>
    <edge from-layer="0" from-port="0" to-layer="3" to-port="0"/>
    <edge from-layer="3" from-port="1" to-layer="8" to-port="0"/>
    <edge from-layer="0" from-port="0" to-layer="4" to-port="0"/>
    <edge from-layer="4" from-port="1" to-layer="9" to-port="0"/>
    <edge from-layer="0" from-port="0" to-layer="5" to-port="0"/>
    <edge from-layer="0" from-port="0" to-layer="6" to-port="0"/>
    <edge from-layer="6" from-port="1" to-layer="10" to-port="0"/>
    <edge from-layer="99" from-port="0" to-layer="10" to-port="0"/>
  </edges>
</net>
"""
AXES_BIN = np.array([5], np.int64).tobytes()  # axis 5 of a rank-2 input


@pytest.fixture
def results(tmp_path, monkeypatch):
    write_ir(tmp_path, SEVERAL_PROBLEMS, AXES_BIN, name=NAME)
    monkeypatch.chdir(tmp_path)
    return [(f"{NAME}.xml", validate_file(f"{NAME}.xml"))]


def test_each_problem_at_its_line(results):
    # (code, a snippet of the line it must point at): the problems this file is built to have.
    expected = {
        ("IR306", 'name="flip"'), ("IR302", 'destination_type="f17"'),
        ("IR401", "<dim>7</dim></port>"), ("IR205", 'name="dead"'),
        ("IR103", 'name="mystery"'), ("IR201", 'from-layer="99"'),
    }
    text = SEVERAL_PROBLEMS.lstrip("\n")
    found = {(d.code, d.location.line) for d in results[0][1]}
    missing = {(code, snippet) for code, snippet in expected
               if (code, line_of(text, snippet)) not in found}
    assert not missing, f"not reported at the expected line: {missing}; found {sorted(found)}"


def _normalised(fmt: str, output: str) -> str:
    if fmt != "sarif":
        return output
    log = json.loads(output)
    log["runs"][0]["tool"]["driver"]["version"] = "VERSION"  # a release must not break the test
    return json.dumps(log, indent=2) + "\n"


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_snapshot(results, fmt):
    output = _normalised(fmt, RENDERERS[fmt](results))
    snapshot = SNAPSHOTS / f"{NAME}{SUFFIX[fmt]}"
    if UPDATE:
        snapshot.write_text(output, encoding="utf-8")
    assert snapshot.exists(), f"no snapshot {snapshot.name}: run with IREXEC_UPDATE_SNAPSHOTS=1"
    assert output == snapshot.read_text(encoding="utf-8"), (
        f"{snapshot.name} is stale: if the new output is right, regenerate with "
        f"IREXEC_UPDATE_SNAPSHOTS=1 pytest {Path(__file__).name}")


def test_sarif_of_the_file_is_valid(results):
    log = assert_valid_sarif(RENDERERS["sarif"](results))
    assert len(log["runs"][0]["results"]) == len(results[0][1])
