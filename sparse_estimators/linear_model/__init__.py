"""Sparse linear estimators: exactly ``k`` features, scikit-learn compatible."""

from ._iht import IHTClassifier, IHTRegressor

__all__ = ["IHTClassifier", "IHTRegressor"]
