"""Choosing the sparsity level k: warm-started paths, cross-validation, information criteria."""

from ._path import sparsity_path
from ._search import SparsityCV, SparsityIC

__all__ = ["SparsityCV", "SparsityIC", "sparsity_path"]
