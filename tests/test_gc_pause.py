"""irexec/gc_pause.py: the collector is off while a model is built, back on afterwards, the new
objects go to the oldest generation, and a program's own gc state is respected."""

from __future__ import annotations

import gc

import pytest

import irexec
from irexec import gc_pause

SAMPLE = "samples/reverse_sequence.xml"


@pytest.fixture(autouse=True)
def _restore_gc():
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_off_inside_on_after_and_young_generations_empty():
    gc.enable()
    seen = []
    with gc_pause.paused():
        seen.append(gc.isenabled())
        made = [[i] for i in range(50_000)]  # tracked objects: they would fill generation 0
    assert seen == [False]
    assert gc.isenabled()
    assert gc.get_count()[0] < 1000  # handed to the oldest generation, not left young
    assert made[-1] == [49_999]


def test_nested_pauses_act_once():
    gc.enable()
    with gc_pause.paused():
        with gc_pause.paused():
            pass
        assert not gc.isenabled()  # the inner one does not turn it back on
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    with gc_pause.paused():
        pass
    assert not gc.isenabled()


def test_the_programs_frozen_objects_stay_frozen():
    gc.enable()
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    irexec.read_model(SAMPLE)
    assert gc.get_freeze_count() > frozen - 1000  # not unfrozen (a few frozen objects may die)
    assert gc.isenabled()


def test_read_model_leaves_the_collector_on_even_after_an_error(tmp_path):
    gc.enable()
    bad = tmp_path / "bad.xml"
    bad.write_text("<net version='11'><layers><layer/></layers></net>")
    with pytest.raises(irexec.IRError):
        irexec.read_model(bad)
    assert gc.isenabled()
    irexec.compile_model(irexec.read_model(SAMPLE))
    assert gc.isenabled()
