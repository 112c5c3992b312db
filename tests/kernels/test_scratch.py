"""kernels/scratch.py: per-thread arenas for kernels' temporaries."""

from __future__ import annotations

import numpy as np

from irexec.kernels import scratch


def test_a_set_over_the_limit_does_not_stop_later_sets_from_reusing_the_buffer():
    """A set of temporaries larger than the arena's limit takes fresh arrays; the sets after
    it that fit still come from one kept buffer (the large set is not what the buffer is
    grown to, nor a reason never to grow it again)."""
    arena = scratch.Arena(1000)
    arena.start(4000)
    big = arena.take((1000,), np.float32)
    assert big.base is None and arena.buffer is None
    for _ in range(2):
        arena.start(400)
        small = arena.take((100,), np.float32)
    assert arena.buffer is not None and small.base is arena.buffer
    assert arena.buffer.nbytes <= 1000


def test_temporaries_of_one_set_do_not_overlap():
    arena = scratch.Arena(1 << 20)
    for _ in range(2):
        arena.start()
        parts = [arena.take((n,), np.float64) for n in (3, 17, 64, 5)]
    assert all(p.base is arena.buffer for p in parts)
    for i, p in enumerate(parts):
        for q in parts[i + 1:]:
            assert not np.shares_memory(p, q)
