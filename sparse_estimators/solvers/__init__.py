"""Sparse solvers: one function per algorithm over (loss, operator, k, options).

Every solver has the signature
``solver(loss, operator, k, *, W0, b0, step_size, max_iter, tol, verbose, **options)``
and returns a :class:`SolverResult`.
"""

from ._accelerated import accelerated_iht
from ._base import IterationMonitor, SolverResult, backtracking_step
from ._iht import iht
from ._iobs import iobs
from ._local_search import LowRankProblem, SpectralWeights, low_rank_local_search, regularized_local_search
from ._regularized import regularized_iht
from ._splice import splice

__all__ = ["accelerated_iht", "IterationMonitor", "SolverResult", "backtracking_step", "iht", "iobs",
           "LowRankProblem", "SpectralWeights", "low_rank_local_search", "regularized_iht",
           "regularized_local_search", "splice"]
