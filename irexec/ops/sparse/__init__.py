"""Sparse operations: embedding bags and segments, SparseFillEmptyRows."""
