"""kernels.numeric.broadcast_shape: numpy's broadcasting rule, computed in plain Python."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irexec.kernels.numeric import broadcast_shape

DIMS = st.lists(st.sampled_from([0, 1, 2, 3]), max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(DIMS, DIMS)
def test_same_as_numpy(a, b):
    try:
        want = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(ValueError):
            broadcast_shape(np.empty(a), np.empty(b))
        return
    assert broadcast_shape(np.empty(a), np.empty(b)) == want
