"""Sparse linear estimators: exactly ``k`` features, scikit-learn compatible."""

from ._accelerated import AcceleratedIHTClassifier, AcceleratedIHTRegressor
from ._iht import IHTClassifier, IHTRegressor
from ._iobs import IOBSClassifier, IOBSRegressor
from ._reduced_rank import ReducedRankClassifier, ReducedRankRegressor
from ._regularized import RegularizedIHTClassifier, RegularizedIHTRegressor

__all__ = [
    "AcceleratedIHTClassifier",
    "AcceleratedIHTRegressor",
    "IHTClassifier",
    "IHTRegressor",
    "IOBSClassifier",
    "IOBSRegressor",
    "ReducedRankClassifier",
    "ReducedRankRegressor",
    "RegularizedIHTClassifier",
    "RegularizedIHTRegressor",
]
