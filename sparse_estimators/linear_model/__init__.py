"""Sparse linear estimators: exactly ``k`` features, scikit-learn compatible."""

from ._accelerated import AcceleratedIHTClassifier, AcceleratedIHTRegressor
from ._iht import IHTClassifier, IHTRegressor

__all__ = ["AcceleratedIHTClassifier", "AcceleratedIHTRegressor", "IHTClassifier", "IHTRegressor"]
