"""Low-rank matrix completion and imputation.

:func:`complete_matrix` completes a matrix of given rank from its observed
entries (a scipy.sparse matrix) without ever forming the dense matrix;
:class:`LowRankImputer` is the scikit-learn transformer built on it.
"""

from ._completion import CompletionResult, complete_matrix
from ._imputer import LowRankImputer

__all__ = ["CompletionResult", "LowRankImputer", "complete_matrix"]
