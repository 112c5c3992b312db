"""Reverse the first ``lengths[b]`` elements along one axis, for every index ``b`` of another.

This is the shared heart of OpenVINO ReverseSequence-1, ONNX ReverseSequence-10 and DirectML's
reverse-subsequences. Each op applies its own rules to turn its inputs into validated lengths; this
kernel trusts them: ``lengths`` is an integer array of ``data.shape[batch_axis]`` values, each in
``[0, data.shape[seq_axis]]``, and the two axes are distinct and non-negative. Lengths 0 and 1 leave
a slice unchanged.
"""

from __future__ import annotations

import numpy as np


def reverse_subsequences(data: np.ndarray, lengths: np.ndarray, batch_axis: int,
                         seq_axis: int) -> np.ndarray:
    out = data.copy()
    # Views with the batch axis first and the sequence axis second; writes go through to `out`.
    src = np.moveaxis(data, (batch_axis, seq_axis), (0, 1))
    dst = np.moveaxis(out, (batch_axis, seq_axis), (0, 1))
    rows = np.flatnonzero(lengths > 1)
    if rows.size == 0:
        return out
    row_lengths = lengths[rows]
    distinct = np.unique(row_lengths)
    if distinct.size * 4 < rows.size:
        # Many rows share a length: move each group with one fancy-indexed copy.
        for n in distinct.tolist():
            group = rows[row_lengths == n]
            dst[group, :n] = src[group, n - 1::-1]
    else:
        for b, n in zip(rows.tolist(), row_lengths.tolist()):
            dst[b, :n] = src[b, n - 1::-1]
    return out
