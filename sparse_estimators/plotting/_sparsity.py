"""Plots of k selection: the score against k, and the coefficient paths."""

import numpy as np


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("Plotting needs matplotlib: pip install matplotlib "
                          "(or the 'doc' extra of sparse_estimators).") from exc
    return plt


def _paths(coefs, n_levels):
    """One curve per feature: ``(n_k, n_features)``, the l2 norm over the outputs or classes of a 3-D path."""
    if coefs.ndim == 3:  # (sparsity_path's coefs of several outputs or classes: (n_k, n_outputs, n_features))
        coefs = np.linalg.norm(coefs, axis=1)
    if coefs.ndim != 2 or coefs.shape[0] != n_levels:
        raise ValueError(f"coefs must have shape (n_k, n_features) or (n_k, n_outputs, n_features) with n_k = "
                         f"{n_levels} (the length of k_grid), got shape {coefs.shape}.")
    return coefs


class SparsityPathDisplay:
    """Score against ``k`` (mean ± std) and coefficient paths, scikit-learn display style.

    Build it with :meth:`from_estimator` (from a fitted :class:`SparsityCV`
    or :class:`SparsityIC`, or an estimator fitted with ``k=None``) and draw
    with :meth:`plot`; or pass the arrays.

    Parameters
    ----------
    k_grid : ndarray of shape (n_k,)
        Sparsity levels.
    scores : ndarray of shape (n_k,)
        Mean cross-validated score, or the information criterion.
    scores_std : ndarray of shape (n_k,) or None, default=None
        Standard deviation across folds (drawn as a band).
    coefs : ndarray of shape (n_k, n_features) or (n_k, n_outputs, n_features), or None, default=None
        Coefficients at each ``k`` (``sparsity_path``'s ``coefs``); several
        outputs or classes are drawn as their l2 norm per feature.
    k_best : int or None, default=None
        The chosen ``k`` (a vertical line).
    score_name : str, default="score"
        Label of the score axis.
    feature_names : list of str or None, default=None
        Names for the legend of the coefficient paths.

    Attributes
    ----------
    ax_ : ndarray of matplotlib Axes
        The score axis and the coefficient axis (when ``coefs`` is given).
    figure_ : matplotlib Figure
        The figure.
    """

    def __init__(self, k_grid, scores, scores_std=None, coefs=None, k_best=None, score_name="score",
                 feature_names=None):
        self.k_grid = np.asarray(k_grid)
        self.scores = np.asarray(scores)
        self.scores_std = None if scores_std is None else np.asarray(scores_std)
        self.coefs = None if coefs is None else _paths(np.asarray(coefs), self.k_grid.size)
        self.k_best = k_best
        self.score_name = score_name
        self.feature_names = feature_names

    @classmethod
    def from_estimator(cls, estimator, X=None, y=None, *, sample_weight=None, ax=None, max_legend=10):
        """Draw the plots for a fitted :class:`SparsityCV`, :class:`SparsityIC` or ``k=None`` estimator.

        Parameters
        ----------
        estimator : SparsityCV, SparsityIC or estimator fitted with k=None
            Fitted selector (with several metrics, the mean score drawn is
            the one ``refit`` names: its name, or the ``metric`` keyword of a
            ``functools.partial`` such as ``partial(one_standard_error,
            metric="roc_auc")``; else the first metric); or an estimator of
            this package fitted with ``k=None``, which chose ``k_`` along its own path: its criterion
            (``criterion_path_`` over ``k_path_``, named by
            ``k_criterion_``) is drawn, and ``k_`` marked. An estimator
            fitted with an integer ``k`` has no path to draw (a TypeError).
        X, y : array-like, default=None
            When given, the coefficient paths are computed on them with
            :func:`sparsity_path` (usually the training data), over the
            levels of the score panel (for a ``k=None`` fit, ``k_path_``:
            the estimator's own solver at each level, while its criterion
            ranked the cheaper fits of its path, see ``k``).
        sample_weight : array-like, default=None
            Sample weights for the path.
        ax : array of two matplotlib Axes, or one Axes, default=None
            Where to draw; created when None.
        max_legend : int, default=10
            Largest number of features named in the legend.

        Returns
        -------
        SparsityPathDisplay
        """
        from ..model_selection import sparsity_path

        source = getattr(estimator, "estimator", None)  # (the searches' estimator: its paths are drawn)
        if hasattr(estimator, "cv_results_"):
            results = estimator.cv_results_
            grid = np.array([p["k"] for p in results["params"]])
            # (several metrics: the one refit chose k by, a partial's metric= included, else the first)
            refit = estimator.refit
            chosen = refit if isinstance(refit, str) else getattr(refit, "keywords", {}).get("metric")
            metric = "score" if "mean_test_score" in results else (
                chosen if isinstance(chosen, str) and f"mean_test_{chosen}" in results
                else next(key[len("mean_test_"):] for key in results if key.startswith("mean_test_")))
            scores, std = results[f"mean_test_{metric}"], results[f"std_test_{metric}"]
            name = "mean CV score" if metric == "score" else f"mean CV {metric}"
        elif hasattr(estimator, "criterion_"):
            grid, scores, std = estimator.k_grid_, estimator.criterion_, None
            name = estimator.criterion.upper()
        elif hasattr(estimator, "k_path_") and hasattr(estimator, "criterion_path_"):  # (fitted with k=None)
            grid, scores, std = estimator.k_path_, estimator.criterion_path_, None
            name = str(getattr(estimator, "k_criterion_", "criterion")).upper()
            source = estimator
        else:
            raise TypeError("from_estimator needs a fitted SparsityCV or SparsityIC, or an estimator fitted with "
                            "k=None (an integer k has no path to draw).")
        coefs, names = None, None
        if X is not None and y is not None:
            path = sparsity_path(source, X, y, grid, sample_weight=sample_weight)
            coefs = path.coefs
            names = getattr(estimator, "feature_names_in_", None)
        display = cls(grid, scores, std, coefs, estimator.k_, name, names)
        return display.plot(ax=ax, max_legend=max_legend)

    def plot(self, ax=None, *, max_legend=10):
        """Draw the score panel and, when coefficients are known, the path panel.

        Parameters
        ----------
        ax : array of two matplotlib Axes, or one Axes, default=None
            Where to draw; created when None.
        max_legend : int, default=10
            Largest number of features named in the legend.

        Returns
        -------
        self : SparsityPathDisplay
        """
        plt = _pyplot()
        n_panels = 1 if self.coefs is None else 2
        if ax is None:
            fig, ax = plt.subplots(1, n_panels, figsize=(5.5 * n_panels, 4), squeeze=False)
            ax = ax[0]
        ax = np.atleast_1d(ax)
        score_ax = ax[0]
        # drawn in increasing k (a grid given in another order would zigzag; the legend ranks at the largest k)
        order = np.argsort(self.k_grid, kind="stable")
        k_grid, scores = self.k_grid[order], self.scores[order]
        score_ax.plot(k_grid, scores, marker="o", ms=3, label=self.score_name)
        if self.scores_std is not None:
            std = self.scores_std[order]
            score_ax.fill_between(k_grid, scores - std, scores + std, alpha=0.25, label="± 1 std")
        if self.k_best is not None:
            for a in ax:
                a.axvline(self.k_best, color="k", ls="--", lw=1)
            score_ax.plot([], [], "k--", lw=1, label=f"chosen k = {self.k_best}")
        score_ax.set_xlabel("k (number of features)")
        score_ax.set_ylabel(self.score_name)
        score_ax.legend(loc="best")
        if self.coefs is not None and len(ax) > 1:
            path_ax = ax[1]
            coefs = self.coefs[order]
            active = np.flatnonzero(np.any(coefs != 0, axis=0))
            ranked = active[np.argsort(-np.abs(coefs[-1, active]))]
            for rank, j in enumerate(ranked):
                label = None
                if rank < max_legend:
                    label = str(self.feature_names[j]) if self.feature_names is not None else f"x{j}"
                path_ax.plot(k_grid, coefs[:, j], lw=1.2, label=label)
            path_ax.axhline(0, color="0.6", lw=0.8)
            path_ax.set_xlabel("k (number of features)")
            path_ax.set_ylabel("coefficient")
            if len(ranked):
                path_ax.legend(loc="best", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax[0].figure
        return self
