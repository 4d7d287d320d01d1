"""Thresholding operators at sparsity level k (Liu & Barber, Sec. 4).

Every operator keeps the k entries of largest magnitude (ties: lower index)
and shrinks their magnitudes with a scalar map ``shrink(a, tau)`` where
``tau`` is the (k+1)-th largest magnitude. The same map serves three
structures, which is why the operators only implement ``shrink``:

* a vector: magnitudes are ``abs(z)``;
* the rows of a matrix (one support shared by all outputs or classes):
  magnitudes are row l2 norms and each kept row is rescaled;
* singular values (low rank): apply ``shrink`` to the spectrum.

All operators are positively homogeneous, ``P(a z) = a P(z)`` for ``a > 0``,
so no threshold needs rescaling with the step size.
"""

import copy
import dataclasses
import inspect
from dataclasses import dataclass
from numbers import Real

import numpy as np

from ._selection import select_top_k, unit_norms

__all__ = ["ThresholdingOperator", "Hard", "Soft", "Reciprocal", "Lq", "get_operator"]


class ThresholdingOperator:
    """Base class of the sparsity-level thresholding operators.

    Subclasses implement :meth:`shrink`; :meth:`__call__` handles support
    selection for vectors and for the rows of a matrix. The parameters (a
    frozen dataclass's fields, as ``c`` of :class:`Reciprocal`) follow
    scikit-learn's protocol (:meth:`get_params`, :meth:`set_params`,
    ``clone``), so an estimator's ``thresholding__c`` can be searched.
    """

    #: True when the operator returns its input unchanged on the support.
    is_hard = False

    # -- scikit-learn's parameter protocol: an estimator's ``thresholding__c`` (GridSearchCV, clone) --------------
    @classmethod
    def _param_names(cls):
        """The parameters: a dataclass's fields, else the named arguments of ``__init__`` (as scikit-learn's)."""
        if dataclasses.is_dataclass(cls):
            return [field.name for field in dataclasses.fields(cls) if field.init]
        if cls.__init__ is object.__init__:
            return []
        return [p.name for p in inspect.signature(cls.__init__).parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self, deep=True):
        """The operator's parameters, as a scikit-learn estimator gives its own.

        An estimator whose ``thresholding`` is an operator object lists them
        as nested parameters (``est.get_params()`` has ``thresholding__c``
        for :class:`Reciprocal`), so a grid search can vary them.

        Parameters
        ----------
        deep : bool, default=True
            Also the parameters of parameters that have ``get_params``
            (``name__param``).

        Returns
        -------
        dict
            Parameter names (the dataclass fields, e.g. ``c`` or ``q``;
            for a subclass that is not a dataclass, the arguments of
            ``__init__`` stored under their own names) mapped to values.
        """
        params = {}
        for name in self._param_names():
            if not hasattr(self, name):  # (an __init__ argument the object does not keep under its name)
                continue
            value = params[name] = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                params.update((f"{name}__{key}", inner) for key, inner in value.get_params().items())
        return params

    def set_params(self, **params):
        """Set the operator's parameters in place, as a scikit-learn estimator's ``set_params``.

        This is how ``est.set_params(thresholding__c=0.5)`` (and so a grid
        search over ``thresholding__c``) reaches the operator: the values
        are checked first (an invalid one raises a ValueError and leaves the
        operator unchanged). It is the one way to change an operator:
        assigning an attribute raises ``FrozenInstanceError``. Equality and
        hash follow the parameters, so an operator changed here hashes
        anew (do not change one that is a key of a dict or set).

        Parameters
        ----------
        **params : dict
            Parameter names and values (``c`` for :class:`Reciprocal`, ``q``
            for :class:`Lq`).

        Returns
        -------
        self : ThresholdingOperator
            The operator, changed.
        """
        if not params:
            return self
        valid = self.get_params(deep=False)
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ValueError(f"Invalid parameter {unknown[0]!r} for operator {self!r}. Valid parameters are: "
                             f"{sorted(valid)!r}.")
        if dataclasses.is_dataclass(self):  # (checked by the class's own __post_init__ on a new object first)
            checked = dataclasses.replace(self, **params)
            params = {name: getattr(checked, name) for name in params}
        for name, value in params.items():
            object.__setattr__(self, name, value)  # (past a frozen dataclass's __setattr__, on purpose)
        return self

    def __sklearn_clone__(self):
        """A copy with the same parameters (what ``sklearn.base.clone`` returns for an operator)."""
        return copy.deepcopy(self)

    def shrink(self, a, tau):
        """Shrink the kept magnitudes.

        Parameters
        ----------
        a : ndarray
            Magnitudes of the kept entries, each ``>= tau``.
        tau : float
            The largest magnitude outside the support (``>= 0``).

        Returns
        -------
        ndarray
            New magnitudes, same shape as ``a``.
        """
        raise NotImplementedError

    def support(self, z, k):
        """Sorted indices of the k entries (or rows) of largest magnitude.

        Parameters
        ----------
        z : ndarray of shape (p,) or (p, m)
            Vector, or matrix whose rows are thresholded together.
        k : int
            Sparsity level.

        Returns
        -------
        ndarray of shape (min(k, p),)
        """
        return select_top_k(_magnitudes(z), k)[0]

    def __call__(self, z, k, *, return_support=False):
        """Apply the operator at sparsity level ``k``.

        Parameters
        ----------
        z : ndarray of shape (p,) or (p, m)
            A vector, or a matrix whose rows share one support (selected by
            row l2 norm; each kept row is rescaled by the shrunk norm).
        k : int
            Number of entries (rows) to keep; ``k >= p`` keeps everything and
            leaves ``z`` unchanged.
        return_support : bool, default=False
            Also return the sorted indices of the selected entries (rows).

        Returns
        -------
        out : ndarray, same shape as ``z``
        support : ndarray, only when ``return_support`` is True
        """
        if type(z) is not np.ndarray:
            z = np.asarray(z)
        if z.dtype.kind != "f":
            # integer or boolean input: the shrunk magnitudes are fractional
            z = z.astype(np.float64)
        mags = _magnitudes(z)
        support, tau = select_top_k(mags, k)
        if self.is_hard:
            out = kept_rows(z, support)
            return (out, support) if return_support else out
        out = np.zeros(z.shape, z.dtype) if z.flags.c_contiguous else np.zeros_like(z)
        kept = mags[support]
        if z.ndim == 1:
            new = self.shrink(kept, tau) if tau > 0 else kept
            out[support] = np.sign(z[support]) * new
        else:
            new = self.shrink(kept, tau) if tau > 0 else kept
            with np.errstate(invalid="ignore", divide="ignore"):
                scale = np.where(kept > 0, new / kept, 0.0)
            out[support] = z[support] * scale[:, None]
        if return_support:
            return out, support
        return out


def _magnitudes(z):
    if z.ndim == 1:
        return np.abs(z)
    if z.ndim == 2:
        if z.shape[1] == 1:
            return np.abs(z[:, 0])
        return unit_norms(z)  # (scaled where the squares leave the range: homogeneous at every scale)
    raise ValueError(f"Thresholding expects a 1-D or 2-D array, got {z.ndim} dimensions.")


def kept_rows(z, support):
    """``z`` on ``support`` (entries of a vector, rows of a matrix), zeros elsewhere: hard thresholding's output."""
    out = np.zeros(z.shape, z.dtype) if z.flags.c_contiguous else np.zeros_like(z)
    if z.ndim == 2 and z.shape[1] == 1:  # (one column: its 1-D view's indexing, a third of the 2-D rows')
        out[:, 0][support] = z[:, 0][support]
    else:
        out[support] = z[support]
    return out


@dataclass(frozen=True)
class Hard(ThresholdingOperator):
    """Hard thresholding: keep the k largest entries unchanged."""

    is_hard = True

    def shrink(self, a, tau):  # noqa: D102 - documented in the base class
        return a


@dataclass(frozen=True)
class Soft(ThresholdingOperator):
    """Soft thresholding at level k: ``sign(z) * (|z| - tau)_+`` on the top k.

    Relative concavity is infinite (Liu & Barber, Lemma 2): no recovery
    guarantee, and it may return fewer than k non-zeros on ties.
    """

    def shrink(self, a, tau):  # noqa: D102
        return np.maximum(a - tau, 0.0)


@dataclass(frozen=True)
class Reciprocal(ThresholdingOperator):
    """Reciprocal thresholding ``(|z| + sqrt(z^2 - tau^2 (1 - c^2))) / 2``.

    Parameters
    ----------
    c : float in [0, 1], default=0.0
        ``c = 1`` is hard thresholding; ``c = 0`` the "universal" operator;
        ``c = k*/k`` is optimal when the true sparsity ``k*`` is known.
    """

    c: float = 0.0

    def __post_init__(self):
        if not (isinstance(self.c, Real) and 0.0 <= self.c <= 1.0):  # (a string: ValueError, not TypeError)
            raise ValueError(f"Reciprocal thresholding needs 0 <= c <= 1, got c={self.c!r}.")

    def shrink(self, a, tau):  # noqa: D102
        b = tau * np.sqrt(1.0 - self.c**2)
        # (a - b)(a + b) would overflow, or underflow to 0 below 1e-154 (half of a, not the root): the same
        # root, relative to a
        if a.size and (a.max() > 1e150 or a.min() < 1e-150):
            r = b / a
            return 0.5 * a * (1.0 + np.sqrt(np.maximum((1.0 - r) * (1.0 + r), 0.0)))
        return 0.5 * (a + np.sqrt(np.maximum((a - b) * (a + b), 0.0)))


@dataclass(frozen=True)
class Lq(ThresholdingOperator):
    """lq thresholding: the scalar prox of ``lambda |x|^q`` with threshold at tau.

    On the support, ``sign(z) * tau * w`` where ``w`` is the larger root of
    ``u = w + K_q w^(q-1)``, ``u = |z| / tau`` and
    ``K_q = q (2 - 2q)^(1-q) / (2 - q)^(2-q)``; solved by a vectorised Newton
    iteration started at ``w = u`` (monotone: the map is convex).

    Parameters
    ----------
    q : float in (0, 1), default=2/3
        ``q = 2/3`` is the "universal" choice; ``q -> 0`` tends to hard and
        ``q -> 1`` to soft thresholding.
    """

    q: float = 2.0 / 3.0

    def __post_init__(self):
        if not (isinstance(self.q, Real) and 0.0 < self.q < 1.0):
            raise ValueError(f"Lq thresholding needs 0 < q < 1, got q={self.q!r}.")

    @property
    def K(self):
        """The constant ``K_q`` that puts the threshold exactly at ``tau``."""
        q = self.q
        return q * (2 - 2 * q) ** (1 - q) / (2 - q) ** (2 - q)

    def shrink(self, a, tau):  # noqa: D102
        q, K = self.q, self.K
        a = np.asarray(a, dtype=float)
        with np.errstate(over="ignore"):
            u = a / tau
        if np.isinf(u).any():  # (a subnormal tau: there tau w = a to within K (tau / a)^(2 - q), below 1e-300)
            far = np.isinf(u)
            return np.where(far, a, self.shrink(np.where(far, tau, a), tau))
        w = u.copy()
        for _ in range(100):
            g = w + K * w ** (q - 1) - u
            dg = 1.0 + K * (q - 1) * w ** (q - 2)
            step = g / dg
            w = w - step
            if np.all(np.abs(step) <= 1e-14 * np.maximum(w, 1.0)):
                break
        return tau * w


_NAMED = {"hard": Hard, "soft": Soft, "reciprocal": Reciprocal, "lq": Lq}


def get_operator(thresholding):
    """Resolve a ``thresholding`` parameter to an operator object.

    Parameters
    ----------
    thresholding : {'hard', 'soft', 'reciprocal', 'lq'} or ThresholdingOperator
        A name (default parameters: ``Reciprocal(c=0.0)``, ``Lq(q=2/3)``) or an
        operator instance.

    Returns
    -------
    ThresholdingOperator

    Raises
    ------
    ValueError
        If the name is unknown or the object is not an operator.
    """
    if isinstance(thresholding, ThresholdingOperator):
        if not thresholding.is_hard and type(thresholding).shrink is ThresholdingOperator.shrink:
            raise ValueError(f"The 'thresholding' operator {thresholding!r} does not implement shrink(a, tau) "
                             "(or set is_hard = True): a ThresholdingOperator subclass must define how it "
                             "shrinks the kept magnitudes.")
        return thresholding
    if isinstance(thresholding, str) and thresholding in _NAMED:
        return _NAMED[thresholding]()
    raise ValueError(
        "The 'thresholding' parameter must be one of 'hard', 'soft', 'reciprocal', "
        f"'lq' or a ThresholdingOperator instance, got {thresholding!r}."
    )


class _NonNegative(ThresholdingOperator):
    """``operator`` applied to the positive part of its input: the projection of ``positive=True``.

    Negative entries are set to zero first, so the ``k`` entries (rows)
    kept are the largest positive ones and the result is non-negative.
    """

    def __init__(self, operator):
        self.operator = operator
        self.is_hard = operator.is_hard

    def shrink(self, a, tau):
        """The wrapped operator's shrinkage.

        Parameters
        ----------
        a : ndarray
        tau : float

        Returns
        -------
        ndarray
        """
        return self.operator.shrink(a, tau)

    @staticmethod
    def admissible(z):
        """The positive part ``max(z, 0)``, what a structure's projection thresholds.

        Parameters
        ----------
        z : ndarray

        Returns
        -------
        ndarray
        """
        return np.maximum(z, 0)

    def support(self, z, k):
        """The wrapped operator's support of ``max(z, 0)``.

        Parameters
        ----------
        z : ndarray of shape (p,) or (p, m)
        k : int

        Returns
        -------
        ndarray
        """
        return self.operator.support(np.maximum(z, 0), k)

    def __call__(self, z, k, *, return_support=False):
        """The wrapped operator on ``max(z, 0)``.

        Parameters
        ----------
        z : ndarray of shape (p,) or (p, m)
        k : int
        return_support : bool, default=False

        Returns
        -------
        out : ndarray
        support : ndarray, only when ``return_support`` is True
        """
        return self.operator(np.maximum(z, 0), k, return_support=return_support)

    def __repr__(self):
        return f"_NonNegative({self.operator!r})"


def check_nested_params(thresholding, params):
    """A ValueError for ``thresholding__<name>`` in ``params`` when the operator is given by its name.

    A name (``'reciprocal'``) has no parameters to set: scikit-learn's
    ``set_params`` would fail with an AttributeError of ``str``; this says
    to pass the operator object instead. ``thresholding`` is the owner's
    current value (a new one in ``params`` takes its place).
    """
    nested = [key for key in params if key.startswith("thresholding__")]
    thresholding = params.get("thresholding", thresholding)
    if nested and isinstance(thresholding, str):
        example = {"reciprocal": "Reciprocal()", "lq": "Lq()"}.get(thresholding, "Reciprocal()")
        raise ValueError(f"Cannot set {nested[0]!r}: thresholding={thresholding!r} is a name, without parameters; "
                         f"pass the operator object (e.g. thresholding={example} from sparse_estimators.thresholding) "
                         f"to set or search its parameters.")
