"""Plots (matplotlib is an optional dependency, imported only when drawing)."""

from ._sparsity import SparsityPathDisplay

__all__ = ["SparsityPathDisplay"]
