"""Choosing the rank of a completion by hiding a share of the observed entries."""

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._completion import _check_observed, complete_matrix

__all__ = ["RankValidation", "choose_rank"]


@dataclass
class RankValidation:
    """The outcome of :func:`choose_rank`.

    Attributes
    ----------
    ranks : ndarray of shape (n_ranks,)
        The ranks tried, in the order given.
    errors : ndarray of shape (n_ranks, n_repeats)
        Root mean squared error on the held-out entries, per rank and repeat.
    mean_errors : ndarray of shape (n_ranks,)
        ``errors`` averaged over the repeats.
    best_rank : int
        The rank of lowest mean error (the smallest one on ties).
    """

    ranks: np.ndarray
    errors: np.ndarray
    mean_errors: np.ndarray
    best_rank: int

    def plot(self, ax=None):
        """Plot the held-out error against the rank (needs matplotlib).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            ax = plt.subplots()[1]
        order = np.argsort(self.ranks)
        ax.plot(self.ranks[order], self.mean_errors[order], "o-", label="held-out RMSE")
        ax.axvline(self.best_rank, color="0.5", ls="--", label=f"best rank = {self.best_rank}")
        ax.set_xlabel("rank")
        ax.set_ylabel("RMSE on held-out entries")
        ax.legend()
        return ax


def choose_rank(observed, ranks, *, shape=None, holdout=0.1, n_repeats=1, random_state=0, **options):
    """Validation error of each rank, by completing without a random share of the observed entries.

    The standard for completion (there is no sample to hold out, only
    entries): for each repeat, a share ``holdout`` of the observed entries is
    hidden, the rest completed at each rank with :func:`complete_matrix`, and
    the root mean squared error on the hidden entries recorded. The chosen
    rank is then used to complete with all the observed entries.

    Parameters
    ----------
    observed : scipy.sparse matrix or tuple (rows, cols, values)
        The observed entries, as for :func:`complete_matrix`.
    ranks : iterable of int
        The ranks to try (each ``<= min(m, n) - 1``).
    shape : tuple of two ints, default=None
        Required with a tuple ``observed``.
    holdout : float in (0, 1), default=0.1
        Share of the observed entries hidden in each repeat.
    n_repeats : int, default=1
        Independent random hold-outs, averaged.
    random_state : int, RandomState instance or None, default=0
        Draws the held-out entries (and seeds the completions).
    **options
        Passed to :func:`complete_matrix` (``solver``, ``center``,
        ``max_iter``, ...). Convergence warnings of the validation fits are
        silenced.

    Returns
    -------
    RankValidation
        ``ranks``, ``errors``, ``mean_errors``, ``best_rank`` and a ``plot`` method.

    Raises
    ------
    ValueError
        If ``ranks`` is empty or has a rank outside ``[1, min(m, n) - 1]``,
        or ``holdout`` is not in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators.impute import choose_rank
    >>> rng = np.random.default_rng(0)
    >>> M = rng.standard_normal((80, 3)) @ rng.standard_normal((3, 60))
    >>> rows, cols = np.nonzero(rng.uniform(size=M.shape) < 0.5)
    >>> choose_rank((rows, cols, M[rows, cols]), [1, 2, 3, 4, 6], shape=M.shape).best_rank
    3
    """
    S, shape = _check_observed(observed, shape)
    rows, cols, values = np.repeat(np.arange(shape[0]), np.diff(S.indptr)), S.indices, S.data  # (row-major order)
    ranks = np.asarray(list(ranks))
    top = min(shape) - 1
    if ranks.size == 0 or ranks.ndim != 1 or ranks.dtype.kind not in "iu" or ranks.min() < 1 or ranks.max() > top:
        raise ValueError(f"The 'ranks' parameter must be a non-empty list of integers in [1, {top}] "
                         f"(min(m, n) - 1), got {ranks.tolist()!r}.")
    if isinstance(holdout, bool) or not isinstance(holdout, numbers.Real) or not 0 < holdout < 1:
        raise ValueError(f"The 'holdout' parameter must be a number in (0, 1), got {holdout!r}.")
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"The 'n_repeats' parameter must be a positive integer, got {n_repeats!r}.")
    rng = check_random_state(random_state)
    n_out = max(1, int(round(holdout * values.size)))
    if n_out >= values.size:
        raise ValueError(f"holdout={holdout} leaves no observed entry to complete from ({values.size} observed).")
    errors = np.empty((ranks.size, n_repeats))
    for rep in range(n_repeats):
        perm = rng.permutation(values.size)
        out, keep = perm[:n_out], perm[n_out:]
        seed = int(rng.randint(np.iinfo(np.int32).max))
        for i, r in enumerate(ranks):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                result = complete_matrix((rows[keep], cols[keep], values[keep]), int(r), shape=shape,
                                         random_state=seed, **options)
            diff = result.predict(rows[out], cols[out]) - values[out]
            errors[i, rep] = np.sqrt(np.mean(diff**2))
    mean_errors = errors.mean(axis=1)
    best = int(ranks[np.lexsort((ranks, mean_errors))[0]])
    return RankValidation(ranks=ranks, errors=errors, mean_errors=mean_errors, best_rank=best)
