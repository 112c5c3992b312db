"""OpenVINO's everyday idioms (tests/api/idioms.py) run unchanged on irexec: each script runs
with ``irexec`` as ``ov`` and gives what numpy computes independently; where OpenVINO is
installed, the same script runs with ``openvino`` as ``ov`` and the two give the same."""

from __future__ import annotations

import numpy as np
import pytest

import irexec
from tests.api import models
from tests.api.idioms import EXPECTED, IDIOMS


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return models.write_all(tmp_path_factory.mktemp("idiom_models"))


def same(ours, theirs, key, rtol=1e-5, atol=1e-6):
    if isinstance(theirs, np.ndarray) or isinstance(ours, np.ndarray):
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.shape == theirs.shape, key
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=key)
    else:
        assert ours == theirs, key


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_idiom_runs_on_irexec_as_numpy_computes(name, paths, tmp_path):
    got = IDIOMS[name](irexec, paths, tmp_path)
    want = EXPECTED[name](paths)
    for key, value in want.items():
        same(got[key], value, key)


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_idiom_gives_what_openvino_gives(name, paths, tmp_path):
    ov = pytest.importorskip("openvino")
    (tmp_path / "ov").mkdir()
    (tmp_path / "irexec").mkdir()
    theirs = IDIOMS[name](ov, paths, tmp_path / "ov")
    ours = IDIOMS[name](irexec, paths, tmp_path / "irexec")
    assert set(ours) == set(theirs)
    for key in theirs:
        # f16-compressed weights: both read the same rounding, OpenVINO's CPU may compute the
        # decompressed product in another order
        same(ours[key], theirs[key], key, rtol=1e-4 if "compressed" in name else 1e-5)
