"""Structures: what a thresholding operator keeps or drops together (features, groups of features, rank)."""

from ._base import Rows, Structure, get_structure
from ._groups import Groups, groups_from_feature_names
from ._per_output import NMPattern, PerOutput
from ._rank import LowRank

__all__ = ["Structure", "Rows", "Groups", "LowRank", "NMPattern", "PerOutput", "get_structure",
           "groups_from_feature_names"]
