"""sparse_estimators: sparse linear models with exactly k features.

Scikit-learn compatible estimators fit by iterative thresholding, built from
three separately tested pieces: :mod:`~sparse_estimators.losses`,
:mod:`~sparse_estimators.thresholding` and :mod:`~sparse_estimators.solvers`.
"""

from ._selection import support_importance
from .linear_model import (
    AcceleratedIHTClassifier,
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    IOBSRegressor,
    ReducedRankClassifier,
    ReducedRankRegressor,
    RegularizedIHTClassifier,
    RegularizedIHTRegressor,
)

__version__ = "0.1.0"

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
    "__version__",
    "support_importance",
]
