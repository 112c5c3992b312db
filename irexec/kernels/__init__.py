"""numpy kernels shared by several ops.

``irexec.kernels.reverse_subsequences(data, lengths, axis)`` is also public, for numpy users: it
reverses the first ``n`` elements of every fibre along ``axis``, ``n`` from ``lengths`` (the
data's shape, or broadcastable to it, with 1 at ``axis``; integers in ``[0, data.shape[axis]]``,
else ``ValueError``). See its module for the full contract.
"""

from irexec.kernels.reverse_subsequences import reverse_subsequences

__all__ = ["reverse_subsequences"]
