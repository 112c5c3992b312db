"""The loop fast path writes Python source for a body (irexec/runtime/loop_code.py). Names from
the model -- layer names, tensor names -- must never become code: only the plan's slot numbers
and step indices are spelled in the source, a layer's name only as the repr in a comment."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

import irexec

DATA = Path(__file__).resolve().parents[2] / "data" / "subgraphs"


def test_hostile_body_layer_names_stay_in_a_comment(tmp_path):
    marker = tmp_path / "ran"
    # a newline, a carriage return, quotes of every kind, Unicode line breaks, a backslash at
    # the end: each would end a comment or a string literal if spelled into the source raw
    code = f"import os; os.system('touch {marker}'); open('{marker}', 'w')"
    hostile = [f"M&#10;{code}", f"M&#13;{code} #", f"'''&quot;&quot;&quot;);{code}#",
               f"M&#x2028;{code}", f"M&#x85;{code}\\", "\\"]
    text = (DATA / "loop_early_exit.xml").read_text()
    feed = {"x": np.array([1.0], np.float32), "limit": np.array(100, np.float32)}
    want = irexec.compile_model(irexec.read_model(DATA / "loop_early_exit.xml"))(feed)
    for i, name in enumerate(hostile):
        changed = (text.replace('name="Multiply_88"', f'name="{name}"')
                   .replace('name="Less_89"', f'name="{name}{i}"')
                   .replace('names="Result_91"', f'names="{name},t{i}"'))
        xml = tmp_path / f"m{i}.xml"
        xml.write_text(changed)
        shutil.copy(DATA / "loop_early_exit.bin", xml.with_suffix(".bin"))
        compiled = irexec.compile_model(irexec.read_model(xml))
        got = compiled(feed)
        for key in want:
            np.testing.assert_array_equal(got[key], want[key])
        (runners,) = [r for _, r in compiled.plan.bodies]
        (runner,) = runners.values()
        code_of = runner.loop_code()
        assert code_of is not None and code_of.runs == 1  # the fast path ran
        source = str(code_of)
        for line in source.splitlines():
            if "os.system" in line:  # only inside the comment, as a repr
                statement, comment = line.split("  # ", 1)
                assert "os" not in statement
    assert not marker.exists()
