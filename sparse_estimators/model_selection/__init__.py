"""Choosing the sparsity level k: warm-started paths, cross-validation, information criteria."""

from ._path import sparsity_path
from ._search import SparsityCV, SparsityIC, one_standard_error

__all__ = ["SparsityCV", "SparsityIC", "one_standard_error", "sparsity_path"]
