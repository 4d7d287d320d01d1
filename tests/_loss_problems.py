"""The losses' test problems (tests/test_losses*.py): every loss on small data, dense and sparse.

Each with a dense reference copy of its design and the explicit formulas the tests compare with.
"""


import numpy as np
import scipy.sparse as sp
from scipy.special import expit, softmax
from sklearn.metrics import log_loss

from sparse_estimators.losses import (
    GramSquaredLoss,
    LogisticLoss,
    MultinomialLoss,
    SquaredLoss,
)

N, P, K = 40, 6, 3
KINDS = ["squared", "squared2", "gram", "gram2", "logistic", "logistic_l2", "multinomial", "multinomial_l2"]
FORMATS = ["dense", "csr", "csc"]
CURVATURE = {"squared": 1.0, "logistic": 0.25, "multinomial": 0.5}


# --------------------------------------------------------------------------
# problem factory
# --------------------------------------------------------------------------
def base_family(kind):
    """'squared', 'logistic' or 'multinomial' ('gram': least squares through the Gram matrix)."""
    family = kind.rstrip("2").replace("_l", "")
    return "squared" if family == "gram" else family


def make_data(seed=0, n=N, p=P):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    X[rng.rand(n, p) < 0.4] = 0.0  # a real sparsity pattern for the sparse formats
    X[:, 1] += 1.5  # a column with a large mean: centering matters
    w = rng.standard_normal(p)
    y_reg = X @ w + 0.7 + 0.3 * rng.standard_normal(n)
    Y_reg2 = np.column_stack([y_reg, -2.0 * y_reg + rng.standard_normal(n)])
    y_bin = (rng.rand(n) < expit(0.8 * (X @ w) - 0.4)).astype(float)
    scores = X @ rng.standard_normal((p, K)) * 0.7 + rng.gumbel(size=(n, K))
    y_multi = np.argmax(scores, axis=1)
    sw = rng.uniform(0.2, 3.0, size=n)
    return X, {"squared": y_reg, "squared2": Y_reg2, "logistic": y_bin, "multinomial": y_multi}, sw


def to_format(X, fmt):
    if fmt == "dense":
        return X
    return {"csr": sp.csr_matrix, "csc": sp.csc_matrix}[fmt](X)


def build(kind, X, y, sw, fit_intercept):
    alpha = 0.3 if kind.endswith("_l2") else 0.0
    fam = base_family(kind)
    if fam == "squared":
        Loss = GramSquaredLoss if kind.startswith("gram") else SquaredLoss
        return Loss(X, y, sample_weight=sw, fit_intercept=fit_intercept), alpha
    if fam == "logistic":
        return LogisticLoss(X, y, sample_weight=sw, fit_intercept=fit_intercept, alpha=alpha), alpha
    return MultinomialLoss(X, y, K, sample_weight=sw, fit_intercept=fit_intercept, alpha=alpha), alpha


def targets(kind, ys):
    return ys["squared2"] if kind in ("squared2", "gram2") else ys[base_family(kind)]


class Problem:
    def __init__(self, kind, fmt="dense", fit_intercept=True, weighted=True, seed=0):
        X, ys, sw = make_data(seed)
        self.kind, self.fam = kind, base_family(kind)
        self.Xd = X
        self.X = to_format(X, fmt)
        self.y = targets(kind, ys)
        self.sw_arg = sw if weighted else None
        self.sw = sw if weighted else np.ones(N)
        self.fit_intercept = fit_intercept
        self.loss, self.alpha = build(kind, self.X, self.y, self.sw_arg, fit_intercept)
        self.m = self.loss.n_outputs
        self.has_b = bool(self.loss.intercept_is_variable and fit_intercept)
        rng = np.random.RandomState(seed + 100)
        self.W = 0.3 * rng.standard_normal((P, self.m))
        self.b = 0.5 * rng.standard_normal(self.m)

    # packed variables [W.ravel(), b] (b only when it is a variable)
    def pack(self, W, b):
        return np.concatenate([W.ravel(), b]) if self.has_b else W.ravel().copy()

    def unpack(self, theta):
        W = theta[: P * self.m].reshape(P, self.m)
        b = theta[P * self.m:] if self.has_b else self.b
        return W, b

    def packed_gradient(self, theta):
        f, gW, gb = self.loss.value_and_gradient(*self.unpack(theta))
        return self.pack(gW, gb if gb is not None else np.zeros(self.m))

    def packed_hessp(self, theta, v):
        V, c = self.unpack(v) if self.has_b else (v.reshape(P, self.m), np.zeros(self.m))
        HV, Hc = self.loss.hessp(*self.unpack(theta), V, c)
        return self.pack(HV, Hc if Hc is not None else np.zeros(self.m))

    def reference_value(self, W, b):
        """The loss from its definition, on the dense data, with sklearn's log_loss for GLMs."""
        Xd, sw = self.Xd, self.sw_arg
        if self.fam == "squared":
            Y = self.y[:, None] if self.y.ndim == 1 else self.y
            pred = Xd @ W
            if self.fit_intercept:
                x_mean = np.average(Xd, axis=0, weights=self.sw)
                y_mean = np.average(Y, axis=0, weights=self.sw)
                pred = pred + (y_mean - x_mean @ W)
            return 0.5 * np.average(((Y - pred) ** 2).sum(axis=1), weights=self.sw)
        # with an intercept the GLM losses centre X too: b is the intercept at the weighted mean of X
        Z = (Xd - np.average(Xd, axis=0, weights=self.sw)) @ W + b if self.fit_intercept else Xd @ W
        pen = 0.5 * self.alpha * np.sum(W**2)
        if self.fam == "logistic":
            return log_loss(self.y, expit(Z[:, 0]), sample_weight=sw, labels=[0, 1]) + pen
        return log_loss(self.y, softmax(Z, axis=1), sample_weight=sw, labels=list(range(K))) + pen

    def design_matrix(self):
        """Explicit dense matrix whose weighted Gram is the Hessian scale (centered / with a ones column)."""
        if self.fam == "squared":
            if self.fit_intercept:
                return self.Xd - np.average(self.Xd, axis=0, weights=self.sw)
            return self.Xd
        if self.fit_intercept:
            return np.column_stack([self.Xd - np.average(self.Xd, axis=0, weights=self.sw), np.ones(N)])
        return self.Xd


ALL_CASES = [(kind, fmt, fi, wt) for kind in KINDS for fmt in FORMATS for fi in (True, False)
             for wt in ((True, False) if fmt == "dense" else (True,))]
ALL_IDS = [f"{k}-{f}-{'int' if fi else 'noint'}-{'sw' if wt else 'nosw'}" for k, f, fi, wt in ALL_CASES]



def identifiable(loss, W):
    """The part of W that the loss determines: rows centred for the unpenalised multinomial."""
    if isinstance(loss, MultinomialLoss) and loss.alpha == 0:
        return W - W.mean(axis=1, keepdims=True)
    return W


def rel_err(a, b):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) / max(np.linalg.norm(np.ravel(b)), 1e-300)


def cox_data(seed=0, n=150, p=18, tied=False, binary=False):
    """Exponential times with a 3-feature log hazard of high signal, censoring; ``tied``: times rounded to 1..~15.

    ``binary``: 0/1 features, so that many risk scores tie. Returns ``X, y, beta, support`` (``y`` as
    scikit-survival's ``Surv.from_arrays`` builds it).
    """
    from sksurv.util import Surv

    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    if binary:
        X = (X > 0).astype(float)
    support = np.sort(3 * rng.choice(p // 3, 3, replace=False) + rng.randint(0, 3, 3))
    beta = np.zeros(p)
    beta[support] = rng.choice([-1.0, 1.0], 3) * rng.uniform(1.0, 1.5, 3)
    t = rng.exponential(np.exp(-X @ beta))
    c = rng.exponential(3.0 * np.median(t), n)
    time = np.minimum(t, c)
    if tied:
        time = np.ceil(5.0 * time / np.median(time))
    return X, Surv.from_arrays(t <= c, time), beta, support
