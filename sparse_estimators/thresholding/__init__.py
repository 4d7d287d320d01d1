"""Thresholding operators at sparsity level k.

``Hard()``, ``Soft()``, ``Reciprocal(c)`` and ``Lq(q)`` follow Liu & Barber,
*Between hard and soft thresholding*; the strings ``'hard'``, ``'soft'``,
``'reciprocal'`` and ``'lq'`` are shorthands accepted by every estimator. :func:`threshold_singular_values`
lifts any of them to the singular values of a matrix (the rank constraint). The objects have scikit-learn's
``get_params`` / ``set_params``: an estimator's ``thresholding__c`` (``thresholding__q``) is searchable.
"""

from ._operators import Hard, Lq, Reciprocal, Soft, ThresholdingOperator, get_operator
from ._rank import project_rank, threshold_singular_values
from ._selection import select_top_k

__all__ = ["Hard", "Lq", "Reciprocal", "Soft", "ThresholdingOperator", "get_operator", "project_rank",
           "select_top_k", "threshold_singular_values"]
