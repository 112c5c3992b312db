"""Keep Python's cyclic garbage collector out of bulk object building.

Reading, inferring and planning a model make hundreds of thousands of small objects (layers,
ports, shapes) and free almost none. Left on, the collector walks all of them again and again as
they age through its three generations: about a third of the time to read a 10,000-layer file.

:func:`paused` turns the collector off while a model is built. When it ends, it hands the new
objects straight to the oldest generation (``gc.freeze()`` then ``gc.unfreeze()``, which moves
every tracked object there), so the young generations' passes never walk the model. The move
takes every object the young generations hold, the program's too: a garbage cycle the program
made just before is then freed by the next full collection instead of the next young one. The
move is skipped when the program itself has frozen objects (``gc.get_freeze_count()``), since
unfreezing would undo its freeze (a ``gc.freeze()`` in another thread between that check and
ours would still be undone). Nested uses (reading inside ``read_model`` inside
``compile_model``) act once, at the outermost.

Objects handed over this way skip CPython's count of objects that reached the oldest generation,
which is what schedules its full collections (one when that count passes a quarter of the oldest
generation). Without it, a program reading model after model would never collect the dropped
ones (layers and ports refer to each other, so only the collector frees them): tested, 40 reads
of a 10,000-layer file grew to 1.7 GiB. So :func:`paused` keeps that count itself and applies
the same rule when the next pause starts: a full collection when more objects were handed over
since the last one than a quarter of what the oldest generation held then (and at least
``MIN_PENDING``). A full collection the program runs itself resets the count.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

MIN_PENDING = 100_000  # objects handed over before a full collection is considered

_handed = 0  # objects handed to the oldest generation since the last full collection
_full_seen = -1  # gc.get_stats()[2]["collections"] when _handed was last reset
_oldest = 0  # objects in the oldest generation after the last full collection run here


@contextmanager
def paused():
    if not gc.isenabled():  # an outer pause, or the program's own choice: leave it be
        yield
        return
    _collect_if_due()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            _hand_over()
        gc.enable()


def _hand_over() -> None:
    global _handed
    _handed += gc.get_count()[0]  # objects made (net) since the young generation was last walked
    gc.freeze()
    gc.unfreeze()


def _collect_if_due() -> None:
    """CPython's rule for full collections, counting the objects handed over."""
    global _handed, _full_seen, _oldest
    full = gc.get_stats()[2]["collections"]
    if full != _full_seen:  # a full collection ran since: it walked everything handed over
        _handed, _full_seen = 0, full
        return
    if _handed > max(MIN_PENDING, _oldest // 4):
        gc.collect()
        _oldest = len(gc.get_objects(generation=2))
        _handed, _full_seen = 0, gc.get_stats()[2]["collections"]
