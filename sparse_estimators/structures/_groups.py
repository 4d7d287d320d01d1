"""Group sparsity: features in groups kept or dropped together (model-based sparsity, Khanna & Kyrillidis Sec. 2)."""

import numpy as np

from ..thresholding import select_top_k
from ._base import Structure


class Groups(Structure):
    """Feature groups: ``k`` counts groups, thresholded on their l2 norms over features and outputs.

    The projection keeps the ``k`` groups of largest norm (ties: the group
    whose label sorts first) and maps their norms with the operator's
    ``shrink`` at ``tau``, the largest norm left out, rescaling each kept
    group (hard thresholding keeps them unchanged).

    Parameters
    ----------
    operator : ThresholdingOperator
    groups : array-like of shape (n_features,)
        One hashable label per feature; features with the same label form a
        group.

    Attributes
    ----------
    labels : ndarray of shape (n_groups,)
        The sorted distinct labels.
    codes : ndarray of shape (n_features,)
        The group index of each feature (into ``labels``).
    """

    #: the splicing search exchanges single features; group exchanges are not implemented
    exchanges = False

    def __init__(self, operator, groups):
        super().__init__(operator)
        self.labels, self.codes = np.unique(np.asarray(groups), return_inverse=True)
        self.codes = self.codes.ravel()
        order = np.argsort(self.codes, kind="stable")
        self._members = np.split(order, np.cumsum(np.bincount(self.codes, minlength=self.labels.size))[:-1])

    def n_units(self, n_features):  # noqa: D102
        return self.labels.size

    def unit_scores(self, G):  # noqa: D102
        return np.sqrt(np.bincount(self.codes, weights=np.einsum("ij,ij->i", G, G), minlength=self.labels.size))

    def units(self, features):  # noqa: D102
        return np.unique(self.codes[np.asarray(features, dtype=np.intp)])

    def features(self, units):  # noqa: D102
        units = np.asarray(units, dtype=np.intp)
        if units.size == 0:
            return np.empty(0, dtype=np.intp)
        return np.sort(np.concatenate([self._members[u] for u in units]))

    def __call__(self, W, k, *, return_support=False):  # noqa: D102
        W = np.asarray(W, dtype=float)
        W2 = W if W.ndim == 2 else W[:, None]
        norms = self.unit_scores(W2)
        kept, tau = select_top_k(norms, k)
        support = self.features(kept)
        out = np.zeros_like(W2)
        if self.is_hard or tau == 0:
            out[support] = W2[support]
        else:
            new = self.operator.shrink(norms[kept], tau)
            scale = np.zeros(self.labels.size)
            with np.errstate(invalid="ignore", divide="ignore"):
                scale[kept] = np.where(norms[kept] > 0, new / norms[kept], 0.0)
            out[support] = W2[support] * scale[self.codes[support]][:, None]
        out = out if W.ndim == 2 else out[:, 0]
        return (out, support) if return_support else out
