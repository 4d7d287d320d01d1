"""The structure a thresholding operator acts through: which coefficients are kept or dropped together.

A structure wraps a :class:`~sparse_estimators.thresholding.ThresholdingOperator`
and is used by every solver in its place: it projects a coefficient matrix
``W`` (n_features, n_outputs) at level ``k`` (``k`` counts the structure's
*units*: features, or groups of features), reports the support, scores the
units for expansion and screening, and says whether the splicing search may
exchange its units. Supports are always sorted *feature* indices, so the
losses (refit, restricted products) need nothing new. The developer guide
(the :doc:`developer notes </developers>`) states the contract.
"""

import copy

import numpy as np

from ..thresholding import select_top_k
from ..thresholding._selection import unit_norms

__all__ = ["Structure", "Rows", "get_structure"]


class Structure:
    """Base class: a thresholding operator applied through a structure.

    Subclasses define the units (:meth:`n_units`, :meth:`unit_scores`,
    :meth:`units`, :meth:`features`); the projection, with or without forced
    units, is shared.

    Parameters
    ----------
    operator : ThresholdingOperator
        The operator whose ``shrink`` maps the kept units' magnitudes.

    Attributes
    ----------
    forced : ndarray of int or None
        Units every projection keeps (``always_select``); they count towards
        ``k`` and are kept unshrunk. Set by :meth:`with_forced`.
    excluded : ndarray of int or None
        Units no projection, expansion or exchange selects (``k=None`` leaves
        out the groups larger than an information criterion can judge). Set
        by :meth:`with_excluded`.
    """

    #: the splicing search may exchange this structure's units
    exchanges = True
    #: while the support stays, hard-thresholding IHT converges to :meth:`refit` on it (the support jump)
    settles = True
    #: what ``k`` counts, in messages (``k`` clipped to it)
    unit_name = "n_features"
    forced = None
    excluded = None

    def __init__(self, operator):
        self.operator = operator

    def with_operator(self, operator):
        """The same structure applied with another operator."""
        new = copy.copy(self)
        new.operator = operator
        return new

    def with_forced(self, units):
        """The same structure, keeping ``units`` (unit indices) in every projection."""
        new = copy.copy(self)
        units = np.unique(np.asarray(units, dtype=np.intp))
        new.forced = units if units.size else None
        return new

    def with_excluded(self, units):
        """The same structure, never selecting ``units`` (unit indices; forced units stay forced)."""
        new = copy.copy(self)
        units = np.unique(np.asarray(units, dtype=np.intp))
        new.excluded = units if units.size else None
        return new

    @property
    def is_hard(self):
        """Whether the projection keeps the selected coefficients unchanged."""
        return self.operator.is_hard

    def n_units(self, n_features):
        """The number of units among ``n_features`` features (what ``k`` counts)."""
        raise NotImplementedError

    def unit_scores(self, G):
        """The l2 norm of each unit of ``G`` (n_features, n_outputs), shape (n_units,)."""
        raise NotImplementedError

    def units(self, features):
        """Sorted units holding the given feature indices."""
        raise NotImplementedError

    def features(self, units):
        """Sorted feature indices of the given units."""
        raise NotImplementedError

    def unit_of_features(self, n_features):
        """The unit of each feature, shape (n_features,)."""
        raise NotImplementedError

    def __call__(self, W, k, *, return_support=False):
        """Project ``W`` onto ``k`` units; ``return_support`` also returns the kept features (sorted).

        The ``k`` units of largest l2 norm (ties: lower unit) are kept, and
        forced units first; the others' norms are mapped by the operator's
        ``shrink`` at ``tau``, the largest norm left out, and each kept unit
        is rescaled as a whole (hard thresholding keeps them unchanged).
        """
        W = np.asarray(W)
        if W.dtype.kind != "f":
            W = W.astype(np.float64)
        admissible = getattr(self.operator, "admissible", None)  # (e.g. positive=True: the positive part)
        if admissible is not None:
            W = admissible(W)
        W2 = W if W.ndim == 2 else W[:, None]
        norms = self.unit_scores(W2)
        if self.forced is None and self.excluded is None:
            kept, tau = select_top_k(norms, k)
            free = kept
        else:
            forced = np.empty(0, dtype=np.intp) if self.forced is None else self.forced
            others = np.setdiff1d(np.arange(norms.size), forced)
            if self.excluded is not None:
                others = np.setdiff1d(others, self.excluded)
            chosen, tau = select_top_k(norms[others], max(k - forced.size, 0))
            free = others[chosen]
            kept = np.union1d(forced, free)
        support = self.features(kept)
        out = np.zeros_like(W2)
        out[support] = W2[support]
        if not self.is_hard and tau > 0 and free.size:
            new = self.operator.shrink(norms[free], tau)
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = np.where(norms[free] > 0, new / norms[free], 0.0)
            scale = np.ones(norms.size)
            scale[free] = ratio
            out[support] *= scale[self.unit_of_features(W2.shape[0])[support]][:, None]
        out = out if W.ndim == 2 else out[:, 0]
        return (out, support) if return_support else out

    def support(self, W, k):
        """The features (sorted) that the projection of ``W`` at level ``k`` keeps."""
        return self(W, k, return_support=True)[1]

    def refit(self, loss, support, W, b):
        """Minimise ``loss`` within the structure at ``W`` (here: over the rows in ``support``).

        The debiasing refit, the support jump and the path's warm starts go
        through it; a structure whose feasible set at ``W`` is not "the rows
        in ``support``" (a rank constraint) overrides it.
        """
        return loss.refit(support, W, b)

    def _expansion_scores(self, G):
        """Unit scores of the descent direction ``-G`` a projected step can follow from zero.

        With a constraint (``positive=True``: the operator's ``admissible`` part),
        only its admissible part: a unit whose gradient points out of the
        feasible set would be projected back to zero, so expanding by it adds nothing.
        """
        admissible = getattr(self.operator, "admissible", None)
        return self.unit_scores(G if admissible is None else admissible(-np.asarray(G)))

    def expand(self, G, mask, k):
        """A feature mask: ``mask`` plus the features of the ``k`` units of largest ``G`` norm outside it.

        The support expansion of accelerated IHT (Khanna & Kyrillidis,
        Algorithm 1) and of the warm-started path. Forced units are always in it.
        """
        scores = self._expansion_scores(G)
        current = np.zeros(scores.size, dtype=bool)
        current[self.units(np.flatnonzero(mask))] = True
        out = mask.copy()
        if self.forced is not None:
            current[self.forced] = True
            out[self.features(self.forced)] = True
        if self.excluded is not None:
            current[self.excluded] = True  # (never added)
        outside = np.flatnonzero(~current)
        if outside.size:
            out[self.features(outside[select_top_k(scores[outside], k)[0]])] = True
        return out


class Rows(Structure):
    """Row sparsity, the default: each feature is a unit, its row of coefficients (all outputs) kept or dropped.

    Without forced features, exactly the operator's own selection by row l2
    norm (by magnitude for one output); ``k`` counts features.

    Parameters
    ----------
    operator : ThresholdingOperator
    """

    def n_units(self, n_features):  # noqa: D102
        return n_features

    def unit_scores(self, G):  # noqa: D102
        return unit_norms(G)

    def units(self, features):  # noqa: D102
        return np.asarray(features, dtype=np.intp)

    def features(self, units):  # noqa: D102
        return np.asarray(units, dtype=np.intp)

    def unit_of_features(self, n_features):  # noqa: D102
        return np.arange(n_features)

    def __call__(self, W, k, *, return_support=False):  # noqa: D102
        if self.forced is None and self.excluded is None:  # (the operator itself: fits without forced
            return self.operator(W, k, return_support=return_support)  # features are bit-identical)
        return super().__call__(W, k, return_support=return_support)

    def support(self, W, k):  # noqa: D102
        if self.forced is None and self.excluded is None:
            return self.operator.support(W, k)
        return super().support(W, k)

    def expand(self, G, mask, k):  # noqa: D102
        # the base class's result without its unit bookkeeping (accelerated IHT calls it every iteration)
        if self.forced is not None or self.excluded is not None:
            return super().expand(G, mask, k)
        mags = self._expansion_scores(G)
        out = mask.copy()
        outside = np.flatnonzero(~mask)
        if outside.size:
            out[outside[select_top_k(mags[outside], k)[0]]] = True
        return out


def get_structure(operator, groups=None):
    """The structure of a fit: :class:`Rows` without ``groups``, else :class:`~sparse_estimators.structures.Groups`.

    Parameters
    ----------
    operator : ThresholdingOperator or Structure
        A structure is returned as it is.
    groups : array-like of shape (n_features,) or None
        One label per feature.

    Returns
    -------
    Structure
    """
    if isinstance(operator, Structure):
        return operator
    if groups is None:
        return Rows(operator)
    from ._groups import Groups

    return Groups(operator, groups)
