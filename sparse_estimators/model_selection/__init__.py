"""Choosing the sparsity level k: warm-started paths, cross-validation, information criteria."""

from ._cv import SparsityCV
from ._ic import SparsityIC
from ._path import sparsity_path
from ._scoring import one_standard_error

__all__ = ["SparsityCV", "SparsityIC", "one_standard_error", "sparsity_path"]
