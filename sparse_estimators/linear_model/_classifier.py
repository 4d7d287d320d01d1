"""The classifiers' base: logistic (two classes) and multinomial losses, one support for all classes."""

from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted

from .. import _policy
from ..losses import LogisticLoss, MultinomialLoss
from ._base import _SparseLinearBase
from ._dask import lazy_method, lazy_score, uses_dask
from ._dask_resident import dask_classifier_setup
from ._scaling import _rescaled, _rescaled_alpha
from ._validation import _check_real, _checked_weights, validated_classification

__all__ = ["SparseClassifierBase"]


class SparseClassifierBase(ClassifierMixin, _SparseLinearBase):
    """Logistic / multinomial classification with exactly ``k`` features."""

    # the support jump, splicing='auto' and the gates: _policy's CLASSIFIER_ constants (their figures there).
    # Exchanges that lower the deviance are accepted when every added feature is itself significant at the
    # risk-inflation level, or half that level when the kept features do not explain the removed ones (splice's
    # add_gate, add_gate_uncorrelated); below about n = 2 k log(p - k), Wainwright's threshold for recovering the
    # support at all, 'auto' does not splice.
    _support_refit_patience = "CLASSIFIER_SUPPORT_REFIT_PATIENCE"
    # a duplicated column's copies, ranked by their own removal costs, came after weaker features and the add
    # gate refused their exchanges (redundant_first: the round again with them first)
    _splice_options = {"redundant_first": True}
    _splice_auto_factor = "CLASSIFIER_SPLICE_AUTO_FACTOR"

    def _splice_kwargs(self, loss, k):
        """``_splice_options`` and the classifiers' gates (``_policy.CLASSIFIER_GATE``, ``..._ADD_GATE``, ...)."""
        return {"gate": _policy.CLASSIFIER_GATE, "add_gate": _policy.CLASSIFIER_ADD_GATE,
                "add_gate_uncorrelated": _policy.CLASSIFIER_ADD_GATE_UNCORRELATED} | self._splice_options

    def __init__(self, k=None, *, thresholding="hard", step_size="auto", max_iter=1000, tol=1e-4,
                 fit_intercept=True, debias=True, splicing="auto",
                 groups=None, always_select=None, warm_start=False, verbose=0, alpha=1e-4,
                 class_weight=None):
        super().__init__(k, thresholding=thresholding, step_size=step_size, max_iter=max_iter,
                         tol=tol, fit_intercept=fit_intercept, debias=debias, splicing=splicing,
                         groups=groups, always_select=always_select, warm_start=warm_start, verbose=verbose)
        self.alpha = alpha
        self.class_weight = class_weight

    _parameter_constraints = {"alpha": [Interval(Real, 0, None, closed="left")],
                              "class_weight": [dict, StrOptions({"balanced"}), None]}

    def _validate_params(self):
        operator = super()._validate_params()
        _check_real("alpha", self.alpha, low_open=False)
        if not (self.class_weight is None or self.class_weight == "balanced"
                or isinstance(self.class_weight, dict)):
            raise ValueError("The 'class_weight' parameter must be None, 'balanced' or a dict, "
                             f"got {self.class_weight!r}.")
        return operator

    def fit(self, X, y, sample_weight=None, coef_init=None):
        """Fit the model: logistic for two classes, multinomial for more.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; scipy.sparse input is never densified. Dense input
            is used in C order (a Fortran-ordered array, e.g. from a DataFrame,
            is copied once), so results do not depend on memory layout.
            float32 input is kept in float32 (not copied); products with it
            are computed in float32, everything else in float64, and the
            fitted ``coef_``, ``intercept_`` and predictions are float32.
        y : array-like of shape (n_samples,)
            Class labels. With more than two classes all classes share one
            support of ``k`` features.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples, multiplied by ``class_weight``; integer
            weights are equivalent to repeating rows. Weights that sum to less
            than the number of rows of positive weight (e.g. normalised to
            sum to 1) are read as relative importances: the splicing search's
            significance thresholds then count each of those rows as one
            observation.
        coef_init : array-like of shape (n_features,) or (n_classes, n_features), default=None
            Starting coefficients (``(1, n_features)`` for two classes).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, coef_init)

    def _setup(self, X, y, sample_weight):
        if uses_dask(X):  # (X stays in its chunks, labels, weights and predictors on the workers)
            return dask_classifier_setup(self, X, y, sample_weight)
        X, y = validated_classification(self, X, y)
        sample_weight = _checked_weights(sample_weight, X)
        X, x_scale = _rescaled(X, centred=self.fit_intercept)
        # (alpha is the user's, on coef_ = x_scale w: alpha x_scale^2 on the rescaled problem's w; see _rescaled_alpha)
        loss, classes = self._classification_loss(X, y, sample_weight, _rescaled_alpha(self.alpha, x_scale))
        return loss, {"attributes": {"classes_": classes}, "scale": (x_scale, 1.0), "dtype": X.dtype}

    def _classification_loss(self, X, y, sample_weight, alpha):
        """The logistic or multinomial loss of ``y`` (checked weights, rescaled ``X``, its alpha), and the classes."""
        if isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind != "O":
            classes, y_enc = np.unique(y, return_inverse=True)  # (LabelEncoder's result, without its 0.2-0.6 ms)
        else:
            encoder = LabelEncoder()
            y_enc = encoder.fit_transform(y)
            classes = encoder.classes_
        if self.class_weight is not None:
            factors = compute_sample_weight(self.class_weight, y)
            if not np.all(np.isfinite(factors) & (factors >= 0)):
                raise ValueError(f"The 'class_weight' parameter must give finite, non-negative weights, "
                                 f"got {self.class_weight!r}.")
            sample_weight = sample_weight * factors
        present = np.unique(y_enc[sample_weight > 0])
        if present.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes with "
                             f"positive weight; got {present.size} class(es).")
        if classes.size == 2:
            return LogisticLoss(X, y_enc, sample_weight, self.fit_intercept, alpha), classes
        return MultinomialLoss(X, y_enc, classes.size, sample_weight, self.fit_intercept, alpha), classes

    @staticmethod
    def _format_coef(W, intercept, info):
        return W.T.copy(), intercept

    def decision_function(self, X):
        """Confidence scores (linear predictor).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        scores = self._decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities (logistic for two classes, softmax otherwise).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        from scipy.special import expit, softmax

        if uses_dask(X):
            check_is_fitted(self)
            return lazy_method(self, "predict_proba", X, len(self.classes_))
        scores = self._decision(X)
        if scores.shape[1] == 1:
            p1 = expit(scores[:, 0])
            return np.column_stack([1.0 - p1, p1])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        from scipy.special import log_expit, log_softmax

        if uses_dask(X):
            check_is_fitted(self)
            return lazy_method(self, "predict_log_proba", X, len(self.classes_))
        scores = self._decision(X)
        if scores.shape[1] == 1:
            return np.column_stack([log_expit(-scores[:, 0]), log_expit(scores[:, 0])])
        return log_softmax(scores, axis=1)

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if uses_dask(X):
            check_is_fitted(self)
            return lazy_method(self, "predict", X, dtype=self.classes_.dtype)
        return self._labels_from_scores(self._decision(X))

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on ``(X, y)`` (weighted by ``sample_weight``), as :class:`~sklearn.base.ClassifierMixin`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        if uses_dask(X):  # (one pass: the weighted count of right predictions)
            check_is_fitted(self)
            return lazy_score(self, X, y, sample_weight, "accuracy")
        return super().score(X, y, sample_weight)

    def _labels_from_scores(self, scores):
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

