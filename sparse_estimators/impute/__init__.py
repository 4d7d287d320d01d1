"""Low-rank matrix completion and imputation.

:func:`complete_matrix` completes a matrix of given rank from its observed
entries (a scipy.sparse matrix) without ever forming the dense matrix;
:class:`LowRankImputer` is the scikit-learn transformer built on it;
:func:`choose_rank` validates ranks by hiding a share of the observed entries.
"""

from ._completion import CompletionResult, complete_matrix
from ._imputer import LowRankImputer
from ._rank_choice import RankValidation, choose_rank

__all__ = ["CompletionResult", "LowRankImputer", "RankValidation", "choose_rank", "complete_matrix"]
