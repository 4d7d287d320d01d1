"""Structures: what a thresholding operator keeps or drops together (features, groups of features)."""

from ._base import Rows, Structure, get_structure
from ._groups import Groups

__all__ = ["Structure", "Rows", "Groups", "get_structure"]
