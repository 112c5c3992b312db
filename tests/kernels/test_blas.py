"""kernels/blas.py: small products on one BLAS thread, the thread count put back after each;
the count never changes a result."""

import threading

import numpy as np
import pytest

import irexec
from irexec.builder import ModelBuilder
from irexec.kernels import blas


def _multi_threaded():
    blas.threads()  # searches once
    if blas._set is None:
        pytest.skip("numpy's BLAS is not a multi-threaded OpenBLAS here")


def _product(shape_a, shape_b, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape_a, dtype=np.float32), \
        rng.standard_normal(shape_b, dtype=np.float32)


@pytest.mark.parametrize("m, k, n", [(96, 16, 1024), (16, 96, 1024), (257, 300, 129),
                                     (512, 512, 96), (3, 5000, 7), (1, 700, 300),
                                     (300, 700, 1)])
def test_thread_count_never_changes_a_product(m, k, n):
    # the same product on OpenBLAS's own count and on one thread, forced either way
    _multi_threaded()
    a, b = _product((m, k), (k, n), m + k + n)
    own = np.matmul(a, b)
    saved = blas._get()
    blas._set(1)
    try:
        one = np.matmul(a, b)
    finally:
        blas._set(saved)
    assert np.array_equal(one, own)
    assert np.array_equal(blas.matmul(a, b), own)
    assert blas.threads() == saved


def test_small_product_runs_on_one_thread_and_the_count_comes_back(monkeypatch):
    _multi_threaded()
    seen = []

    class Spy(np.ndarray):  # notes BLAS's thread count when numpy multiplies it
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            seen.append(blas._get())
            inputs = tuple(np.asarray(x) for x in inputs)
            return getattr(ufunc, method)(*inputs, **kwargs)

    before = blas.threads()
    a, b = _product((64, 64), (64, 64), 1)
    got = blas.matmul(a.view(Spy), b)
    assert seen == [1]
    assert blas.threads() == before
    assert np.array_equal(np.asarray(got), a @ b)
    big_a, big_b = _product((256, 256), (256, 256), 2)  # 2**24 multiply-adds: not small
    # a large product: OpenBLAS's count while cores are free, fewer threads when they are not
    monkeypatch.setattr(blas, "free_cores", lambda: 64)
    seen.clear()
    blas.matmul(big_a.view(Spy), big_b)
    assert seen == [before]
    monkeypatch.setattr(blas, "free_cores", lambda: 1)
    seen.clear()
    got = blas.matmul(big_a.view(Spy), big_b)
    assert seen == [1]
    assert blas.threads() == before
    assert np.array_equal(np.asarray(got), big_a @ big_b)


def test_free_cores_is_between_one_and_the_usable_cores():
    assert 1 <= blas.free_cores() <= blas._CORES


def test_the_count_comes_back_after_an_error():
    _multi_threaded()
    before = blas.threads()
    a, b = _product((64, 64), (64, 64), 3)
    with pytest.raises(ValueError):
        blas.matmul(a, b, out=np.empty((3, 3), np.float32))
    assert blas.threads() == before


def test_products_in_several_threads_leave_the_count_as_found():
    _multi_threaded()
    before = blas.threads()
    a, b = _product((128, 64), (64, 256), 4)
    want = a @ b
    bad = []

    def work():
        for _ in range(200):
            if not np.array_equal(blas.matmul(a, b), want):
                bad.append(1)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not bad
    assert blas.threads() == before


def test_model_of_small_matmul_leaves_blas_as_found():
    b = ModelBuilder("matmul")
    x = b.parameter("x", "f32", [40, 80])
    w = np.arange(80 * 30, dtype=np.float32).reshape(80, 30) / 7
    b.result(b.op("MatMul", x, b.constant(w), transpose_a=False, transpose_b=False), "y")
    value = np.linspace(-1, 1, 3200, dtype=np.float32).reshape(40, 80)
    before = blas.threads()
    got = irexec.compile_model(b.build())({"x": value})[0]
    assert blas.threads() == before
    assert np.array_equal(got, value @ w)


def test_a_count_set_by_other_code_during_a_product_stays():
    # The count is the process's: code that sets its own while an irexec product runs keeps it.
    _multi_threaded()
    before = blas.threads()
    blas._enter(1)
    try:
        blas._set(before - 1 if before > 2 else before + 1)
        theirs = blas._get()
    finally:
        blas._leave()
    try:
        assert blas.threads() == theirs
    finally:
        blas._set(before)


def test_a_large_matrix_vector_product_takes_the_free_cores(monkeypatch):
    # memory-bound (an LLM's decode step): the free cores, as a large product; a small one
    # stays on one thread; the same bits either way
    _multi_threaded()
    seen = []

    class Spy(np.ndarray):
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            seen.append(blas._get())
            inputs = tuple(np.asarray(x) for x in inputs)
            return getattr(ufunc, method)(*inputs, **kwargs)

    before = blas.threads()
    monkeypatch.setattr(blas, "free_cores", lambda: 64)
    x, w = _product((1, 1024), (1024, 1024), 5)
    got = blas.matmul(x.view(Spy), w)
    assert seen == [before] and np.array_equal(np.asarray(got), x @ w)
    seen.clear()
    x, w = _product((1, 256), (256, 512), 6)
    blas.matmul(x.view(Spy), w)
    assert seen == [1]
    assert blas.threads() == before
