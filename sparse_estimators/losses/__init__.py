"""Smooth losses of linear models: value, gradient, smoothness, Hessian products.

Every loss is a weighted *mean* over samples, takes dense or scipy.sparse
``X`` and handles the intercept without thresholding it.
"""

from ._base import BaseLoss
from ._cox import CoxLoss
from ._design import LinearDesign
from ._glm import GammaLoss, PoissonLoss
from ._logistic import LogisticLoss, MultinomialLoss
from ._numerics import largest_eigenvalue, power_iteration
from ._robust import HuberLoss, NoLikelihoodError
from ._squared import GramSquaredLoss, SquaredLoss

__all__ = ["BaseLoss", "CoxLoss", "GammaLoss", "GramSquaredLoss", "HuberLoss", "LinearDesign", "LogisticLoss",
           "MultinomialLoss", "NoLikelihoodError", "PoissonLoss", "SquaredLoss", "largest_eigenvalue",
           "power_iteration"]
