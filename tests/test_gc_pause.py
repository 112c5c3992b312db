"""irexec/gc_pause.py: the collector is off while a model is built, back on afterwards, the new
objects go to the oldest generation, and a program's own gc state is respected."""

from __future__ import annotations

import gc
import weakref

import pytest

import irexec
from irexec import gc_pause
from tests.big_models import convert_chain

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


def test_dropped_models_are_collected_without_the_program_asking(monkeypatch):
    # Layers and ports refer to each other: only the collector frees a dropped model. The
    # objects handed to the oldest generation must still lead to full collections.
    gc.enable()
    model = irexec.read_model(SAMPLE)
    gone = weakref.ref(model.nodes[0])  # a layer: it and its ports refer to each other
    del model
    monkeypatch.setattr(gc_pause, "MIN_PENDING", 0)  # any object handed over makes one due
    monkeypatch.setattr(gc_pause, "_oldest", 0)
    irexec.read_model(SAMPLE)
    irexec.read_model(SAMPLE)
    assert gone() is None


def test_reading_model_after_model_keeps_memory_bounded(tmp_path):
    gc.enable()
    path = convert_chain(tmp_path / "chain.xml", 3_000)
    alive = []
    for _ in range(8):
        alive.append(weakref.ref(irexec.read_model(path).nodes[0]))  # each model dropped
    # A full collection runs once more objects were handed over than MIN_PENDING (or a
    # quarter of the oldest generation): a few dropped models may wait for it, not all.
    assert sum(r() is not None for r in alive) <= 4


def test_a_full_collection_by_the_program_resets_the_count(monkeypatch):
    gc.enable()
    irexec.read_model(SAMPLE)
    gc.collect()
    monkeypatch.setattr(gc_pause, "MIN_PENDING", 0)
    monkeypatch.setattr(gc_pause, "_oldest", 0)
    before = gc.get_stats()[2]["collections"]
    with gc_pause.paused():  # nothing handed over since the program's collection
        pass
    assert gc.get_stats()[2]["collections"] == before
