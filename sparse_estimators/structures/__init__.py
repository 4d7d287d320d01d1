"""Structures: what a thresholding operator keeps or drops together (features, groups of features)."""

from ._base import Rows, Structure, get_structure
from ._groups import Groups, groups_from_feature_names

__all__ = ["Structure", "Rows", "Groups", "get_structure", "groups_from_feature_names"]
