"""Keep Python's cyclic garbage collector out of bulk object building.

Reading, inferring and planning a model make hundreds of thousands of small objects (layers,
ports, shapes) and free almost none. Left on, the collector walks all of them again and again as
they age through its three generations: about a third of the time to read a 10,000-layer file.

:func:`paused` turns the collector off while a model is built. When it ends, it hands the new
objects straight to the oldest generation (``gc.freeze()`` then ``gc.unfreeze()``, which moves
every tracked object there), so the young generations' passes never walk the model; a later full
collection still finds any cycle among them. That move is skipped when the program itself has
frozen objects (``gc.get_freeze_count()``), since unfreezing would undo its freeze. Nested uses
(reading inside ``read_model`` inside ``compile_model``) act once, at the outermost.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused():
    if not gc.isenabled():  # an outer pause, or the program's own choice: leave it be
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()
