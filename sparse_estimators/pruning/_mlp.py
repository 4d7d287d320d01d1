"""Pruning a fitted scikit-learn multi-layer perceptron layer by layer (paper 004, Algorithm 2)."""

import copy
import numbers

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, softmax, xlogy
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from ._layer import METHODS, _check_sparsity, _parse_pattern, _sparse_input, prune_layer

__all__ = ["prune_mlp"]


def _activate(name, Z):
    if name == "relu":
        return np.maximum(Z, 0.0)
    if name == "tanh":
        return np.tanh(Z)
    if name == "logistic":
        return expit(Z)
    if name == "softmax":
        return softmax(Z, axis=1)
    if name == "exp":  # (MLPRegressor(loss='poisson')'s output)
        return np.exp(Z)
    return Z  # identity


def _derivative(name, A):
    """The activation's derivative, from its output ``A``."""
    if name == "relu":
        return (A > 0).astype(A.dtype)
    if name == "tanh":
        return 1.0 - A**2
    if name == "logistic":
        return A * (1.0 - A)
    return np.ones_like(A)


def _forward(mlp, X):
    """The inputs of every layer and the network's output: ``[X, a_1, ..., a_L]``."""
    acts = [X]
    last = len(mlp.coefs_) - 1
    for i, (W, b) in enumerate(zip(mlp.coefs_, mlp.intercepts_, strict=True)):
        acts.append(_activate(mlp.out_activation_ if i == last else mlp.activation, acts[-1] @ W + b))
    return acts


def _targets(mlp, y):
    if isinstance(mlp, MLPClassifier):
        return mlp._label_binarizer.transform(y).astype(float)
    y = np.asarray(y, dtype=float)
    return y.reshape(y.shape[0], -1)


def _checked_targets(mlp, y, n_samples):
    """``_targets``, refusing what the rounds cannot fit: unknown labels, non-finite targets, other outputs."""
    if sp.issparse(y):  # (n_samples x n_outputs, as the network's outputs the rounds form densely)
        y = y.toarray()
    if isinstance(mlp, MLPClassifier) and mlp._label_binarizer.y_type_ != "multilabel-indicator":
        # (the binarizer codes an unknown label as a row of zeros: the rounds then fitted a class no row has)
        labels = np.unique(column_or_1d(y, warn=False))
        unknown = labels[~np.isin(labels, mlp.classes_)]
        if unknown.size:
            raise ValueError(f"y has labels the network was not fitted on: {unknown[:5].tolist()} (its classes_ "
                             f"are {mlp.classes_[:10].tolist()}).")
    Y = _targets(mlp, y)
    if not np.all(np.isfinite(Y)):  # (the gradient step made the weights NaN: "W and X must be finite")
        raise ValueError("y contains NaN or infinity: the gradient rounds need finite targets.")
    if Y.shape[0] != n_samples:
        raise ValueError(f"y has {Y.shape[0]} samples, X has {n_samples}.")
    n_outputs = mlp.coefs_[-1].shape[1]
    if Y.shape[1] != n_outputs:  # (broadcast against the network's outputs, the gradient was silently wrong)
        raise ValueError(f"y has {Y.shape[1]} output(s) (column(s)), but the network has {n_outputs}.")
    return Y


def _loss(mlp, X, Y, penalty=True):
    """The network's training loss (scikit-learn's: squared error / 2, Poisson deviance / 2 or log loss, plus l2)."""
    out = _forward(mlp, X)[-1]
    n = X.shape[0]
    if isinstance(mlp, MLPClassifier):
        P = np.clip(out, 1e-15, 1 - 1e-15)
        value = -np.sum(Y * np.log(P)) / n
        if mlp.out_activation_ == "logistic":  # (binary and multilabel: both classes of every output)
            value -= np.sum((1 - Y) * np.log(1 - P)) / n
    elif getattr(mlp, "loss", "squared_error") == "poisson":  # (sklearn's poisson_loss, summed over the outputs)
        value = np.sum(xlogy(Y, Y / out) - Y + out) / n
    else:
        value = 0.5 * np.sum((out - Y) ** 2) / n
    if not penalty:  # (a validation loss: the data term alone)
        return value
    return value + 0.5 * mlp.alpha * sum(np.vdot(W, W) for W in mlp.coefs_) / n


def _gradient(mlp, X, Y):
    """Gradients of the network's own training loss (with its l2 term) in ``coefs_`` and ``intercepts_``.

    Squared error (``MLPRegressor``: ``sum ||out - y||^2 / (2 n)``), the
    Poisson deviance (``MLPRegressor(loss='poisson')``, exp outputs) and log
    loss (``MLPClassifier``, softmax or logistic outputs) share the output
    delta ``(out - y) / n`` (canonical links); the l2 term is ``alpha ||W||^2 / (2 n)``, as in
    scikit-learn.
    """
    n = X.shape[0]
    acts = _forward(mlp, X)
    delta = (acts[-1] - Y) / n
    g_coef, g_int = [None] * len(mlp.coefs_), [None] * len(mlp.coefs_)
    for i in range(len(mlp.coefs_) - 1, -1, -1):
        g_coef[i] = acts[i].T @ delta + mlp.alpha * mlp.coefs_[i] / n
        g_int[i] = delta.sum(axis=0)
        if i:
            delta = (delta @ mlp.coefs_[i].T) * _derivative(mlp.activation, acts[i])
    return g_coef, g_int


def _layer_sparsities(sparsity, n_layers, pattern):
    values = list(sparsity) if isinstance(sparsity, (list, tuple, np.ndarray)) else [sparsity] * n_layers
    if len(values) != n_layers:
        raise ValueError(f"The 'sparsity' parameter must be a number or a list of {n_layers} numbers (one per "
                         f"layer), got {len(values)} values.")
    out = []
    for s in values:
        if s is None:
            if pattern is None:
                raise ValueError("The 'sparsity' parameter may be None only with a pattern.")
            out.append(None)
        else:
            out.append(_check_sparsity(s))
    return out


def prune_mlp(mlp, X, sparsity, *, y=None, method="iobs", pattern=None, n_rounds=3, learning_rate=0.1,
              batch_size=None, validation_fraction=None, damping=0.01, random_state=None, **layer_options):
    """A pruned copy of a fitted ``MLPRegressor`` or ``MLPClassifier``, layer by layer.

    Each layer's weight matrix is pruned with :func:`prune_layer` on the
    inputs it receives from the calibration data ``X`` through the layers
    before it, already pruned (as OBC and SparseGPT do). With ``y`` and
    ``method='iobs'`` this is followed by ``n_rounds`` rounds of the
    paper's Algorithm 2: a dense gradient step of the network's own loss on
    a calibration batch (every weight and bias of the pruned layers, the
    pruned ones included), then the layer-by-layer projection again, so the
    masks hold at the end.

    Parameters
    ----------
    mlp : MLPRegressor or MLPClassifier
        A fitted network; it is not modified.
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        Calibration inputs. A sparse ``X`` (as ``MLPClassifier`` and
        ``MLPRegressor`` accept in ``fit`` and ``predict``; CSR and CSC are
        used as they are, other formats converted to CSR) is never
        densified: the first layer's statistics are formed from it as in
        :func:`prune_layer` (``H = X^T X / n``, ``n_features x n_features``,
        for 'obs' and 'iobs'; the column norms for 'wanda'; nothing for
        'magnitude'), and the forward passes and gradient steps multiply it
        (sparse times dense). The later layers' inputs are dense activations
        (``n_samples x width``). The result equals that on ``X.toarray()``
        to rounding.
    sparsity : float, None or list of them
        The fraction of weights removed in every output row of each layer
        (see :func:`prune_layer`), one value for all layers (including the
        output layer) or one per layer. Layers at 0 are left unchanged.
        With a ``pattern``: None (the pattern's ``1 - N / M``) or 0.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs), default=None
        Calibration targets, for the gradient steps of 'iobs' (without
        ``y``, no rounds: layer-wise projections only). A scipy.sparse ``y``
        (a multilabel indicator, several outputs) is made dense
        (``n_samples x n_outputs``, as the network's outputs).
    method : {'iobs', 'obs', 'wanda', 'magnitude'}, default='iobs'
        The layer method (:func:`prune_layer`).
    pattern : str or (int, int) or None, default=None
        ``'N:M'`` semi-structured pattern for every pruned layer.
    n_rounds : int, default=3
        Rounds of (gradient step, projection) after the first projection
        (``method='iobs'`` with ``y`` only). 0: the layer-wise projection
        alone.
    learning_rate : float, default=0.1
        The step of the gradient steps (on the mean loss). Safeguard (not
        in the paper, where too large a step made the rounds diverge on a
        digits MLP): a round that raises the network's loss on the whole
        calibration set is undone and the step halved for the next rounds.
    batch_size : int or None, default=None
        Calibration samples drawn (without replacement) for each gradient
        step; None: all of them.
    validation_fraction : float in (0, 1) or None, default=None
        With rounds: this fraction of the calibration samples (drawn with
        ``random_state``) is left out of the gradient steps, and the
        safeguard judges a round by the network's loss on them instead
        (without the l2 term), so that rounds which only fit the
        calibration set are undone (the number of rounds is chosen on
        held-out data). The projections still use every sample (they need
        no targets). None: rounds are judged on the whole calibration set,
        which they fit; with few calibration samples they can then lower
        the test score (see the changelog).
    damping : float, default=0.01
        See :func:`prune_layer`.
    random_state : int, RandomState instance or None, default=None
        Draws the batches.
    **layer_options
        Passed to :func:`prune_layer` (``blocksize``, ``max_iter``, ``tol``).

    Returns
    -------
    MLPRegressor or MLPClassifier
        A deep copy of ``mlp`` with pruned ``coefs_`` (and, after gradient
        rounds, updated ``intercepts_``); it predicts, scores, pickles and
        clones as the original.

    Raises
    ------
    NotFittedError
        If ``mlp`` is not fitted.
    ValueError
        On a bad ``sparsity``, ``method``, ``pattern`` (also an ``M`` that
        does not divide a pruned layer's input width), ``X`` of the wrong
        width, or, with rounds, a ``y`` with labels the network was not
        fitted on, another number of samples or outputs, or NaN.
    MemoryError
        For 'obs' and 'iobs', when a pruned layer's ``H`` (``8 n_in^2``
        bytes; the first layer's ``n_in`` is ``n_features``) cannot be
        allocated: the message names the layer; a sparsity of 0 for it
        leaves it unpruned.

    Notes
    -----
    Cost: one :func:`prune_layer` per pruned layer and projection (see its
    cost), a forward pass per layer to produce the next layer's inputs, and
    one forward and backward pass per gradient step.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.neural_network import MLPClassifier
    >>> from sparse_estimators.pruning import prune_mlp
    >>> X, y = load_digits(return_X_y=True)
    >>> mlp = MLPClassifier((32,), max_iter=300, random_state=0).fit(X / 16, y)
    >>> pruned = prune_mlp(mlp, X / 16, 0.5, y=y, random_state=0)
    >>> [float((W == 0).mean()) for W in pruned.coefs_]
    [0.5, 0.5]
    """
    if not isinstance(mlp, (MLPClassifier, MLPRegressor)):
        raise TypeError(f"prune_mlp takes a scikit-learn MLPRegressor or MLPClassifier, got {type(mlp).__name__}.")
    check_is_fitted(mlp, "coefs_")
    X = check_array(X, accept_sparse=("csr", "csc"), dtype=np.float64)
    if sp.issparse(X):  # (summed duplicates, in a copy: the caller's X is not changed)
        X = _sparse_input(X)
    if X.shape[1] != mlp.coefs_[0].shape[0]:
        raise ValueError(f"X has {X.shape[1]} features, but the network was fitted on {mlp.coefs_[0].shape[0]}.")
    if method not in METHODS:
        raise ValueError(f"The 'method' parameter must be one of {METHODS}, got {method!r}.")
    nm = _parse_pattern(pattern)
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, numbers.Integral) or n_rounds < 0:
        raise ValueError(f"The 'n_rounds' parameter must be an integer >= 0, got {n_rounds!r}.")
    if not (isinstance(learning_rate, numbers.Real) and learning_rate > 0):
        raise ValueError(f"The 'learning_rate' parameter must be a number > 0, got {learning_rate!r}.")
    if batch_size is not None and (not isinstance(batch_size, numbers.Integral) or batch_size < 1):
        raise ValueError(f"The 'batch_size' parameter must be None or an integer >= 1, got {batch_size!r}.")
    if validation_fraction is not None and not (isinstance(validation_fraction, numbers.Real)
                                                and not isinstance(validation_fraction, bool)
                                                and 0 < validation_fraction < 1):
        raise ValueError(f"The 'validation_fraction' parameter must be None or a number in (0, 1), got "
                         f"{validation_fraction!r}.")
    n_layers = len(mlp.coefs_)
    levels = _layer_sparsities(sparsity, n_layers, pattern)
    pruned = copy.deepcopy(mlp)
    active = [s is None or s > 0 for s in levels]
    for i, W in enumerate(mlp.coefs_):  # (before any layer is pruned; prune_layer's message names no layer)
        if nm is not None and active[i] and W.shape[0] % nm[1]:
            raise ValueError(f"The pattern {nm[0]}:{nm[1]} needs a number of inputs divisible by {nm[1]} in every "
                             f"pruned layer; layer {i} (coefs_[{i}]) has {W.shape[0]}: pass one sparsity per layer "
                             "with 0 for it.")
    if not any(active):
        return pruned
    dtypes = [W.dtype for W in mlp.coefs_]
    pruned.coefs_ = [np.asarray(W, dtype=float) for W in pruned.coefs_]
    pruned.intercepts_ = [np.asarray(b, dtype=float) for b in pruned.intercepts_]
    options = dict(method=method, pattern=pattern, damping=damping, **layer_options)

    def project():
        A = X
        last = n_layers - 1
        for i in range(n_layers):
            if active[i]:
                try:
                    pruned.coefs_[i] = prune_layer(pruned.coefs_[i].T, A, levels[i], **options).T
                except MemoryError as error:  # (prune_layer's message names no layer)
                    raise MemoryError(f"Layer {i} (coefs_[{i}], {A.shape[1]} inputs): {error} A sparsity of 0 "
                                      f"for it (one per layer) leaves it unpruned.") from None
            if i < last:
                A = _activate(pruned.activation, A @ pruned.coefs_[i] + pruned.intercepts_[i])

    rounds = y is not None and method == "iobs" and n_rounds
    Y = _checked_targets(mlp, y, X.shape[0]) if rounds else None  # (checked before the projection's cost)
    project()
    if rounds:
        rng = check_random_state(random_state)
        X_fit, Y_fit, X_val, Y_val = X, Y, X, Y  # (gradient steps on X_fit; rounds judged on X_val)
        if validation_fraction is not None:
            n_val = int(round(validation_fraction * X.shape[0]))
            if not 1 <= n_val < X.shape[0]:
                raise ValueError(f"validation_fraction={validation_fraction} of {X.shape[0]} calibration samples "
                                 f"leaves {n_val} for validation and {X.shape[0] - n_val} for the gradient steps; "
                                 "both need at least one.")
            order = rng.permutation(X.shape[0])
            X_val, Y_val, X_fit, Y_fit = X[order[:n_val]], Y[order[:n_val]], X[order[n_val:]], Y[order[n_val:]]
        step = float(learning_rate)
        penalty = validation_fraction is None
        current = _loss(pruned, X_val, Y_val, penalty)
        for _ in range(n_rounds):
            rows = (slice(None) if batch_size is None or batch_size >= X_fit.shape[0]
                    else rng.choice(X_fit.shape[0], batch_size, replace=False))
            g_coef, g_int = _gradient(pruned, X_fit[rows], Y_fit[rows])
            saved = [W.copy() for W in pruned.coefs_], [b.copy() for b in pruned.intercepts_]
            for i in range(n_layers):
                if active[i]:
                    pruned.coefs_[i] = pruned.coefs_[i] - step * g_coef[i]
                    pruned.intercepts_[i] = pruned.intercepts_[i] - step * g_int[i]
            project()
            value = _loss(pruned, X_val, Y_val, penalty)
            if not value <= current:  # safeguard (not in the paper): undo the round, halve the step
                pruned.coefs_, pruned.intercepts_ = saved
                step *= 0.5
            else:
                current = value
    pruned.coefs_ = [W.astype(d, copy=False) for W, d in zip(pruned.coefs_, dtypes, strict=True)]
    pruned.intercepts_ = [b.astype(d, copy=False) for b, d in zip(pruned.intercepts_, dtypes, strict=True)]
    return pruned
