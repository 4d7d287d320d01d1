"""Sparse solvers: one function per algorithm over (loss, operator, k, options).

Every solver has the signature
``solver(loss, operator, k, *, W0, b0, step_size, max_iter, tol, verbose, **options)``
and returns a :class:`SolverResult`.
"""

from ._accelerated import accelerated_iht
from ._base import IterationMonitor, SolverResult, backtracking_step
from ._iht import iht

__all__ = ["accelerated_iht", "IterationMonitor", "SolverResult", "backtracking_step", "iht"]
