"""Thresholding operators at sparsity level k.

``Hard()``, ``Soft()``, ``Reciprocal(c)`` and ``Lq(q)`` follow Liu & Barber,
*Between hard and soft thresholding*; the strings ``'hard'``, ``'soft'``,
``'reciprocal'`` and ``'lq'`` are shorthands accepted by every estimator.
"""

from ._operators import Hard, Lq, Reciprocal, Soft, ThresholdingOperator, get_operator
from ._selection import select_top_k

__all__ = ["Hard", "Lq", "Reciprocal", "Soft", "ThresholdingOperator", "get_operator", "select_top_k"]
