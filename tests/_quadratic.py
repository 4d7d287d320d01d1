"""A quadratic objective on coefficients (identity design), for paper constructions."""

import numpy as np


class QuadraticObjective:
    """``f(w) = <c, w - x> + 1/2 (w - x)^T A (w - x)`` with the loss interface the solvers use.

    Only what a first-order solver calls is implemented: the "linear
    predictor" is the coefficient matrix itself, there is no intercept.
    """

    intercept_is_variable = False
    fit_intercept = False
    n_outputs = 1

    def __init__(self, A, c, x, L):
        self.A, self.c, self.x, self.L = A, c, x, L
        self.n_features = A.shape[0]

    def lipschitz(self):
        return self.L

    def linear_predictor(self, W, b):
        return W

    def value_from_z(self, Z, W):
        d = W[:, 0] - self.x
        return float(self.c @ d + 0.5 * d @ self.A @ d)

    def gradient_from_z(self, Z, W):
        return (self.c + self.A @ (W[:, 0] - self.x))[:, None], None

    def value(self, W, b=None):
        return self.value_from_z(W, W)


def orthogonal_with_first_column(v, seed=0):
    """An orthogonal matrix whose first column is ``v / ||v||``."""
    v = v / np.linalg.norm(v)
    M = np.column_stack([v, np.random.RandomState(seed).standard_normal((v.size, v.size - 1))])
    U, _ = np.linalg.qr(M)
    U[:, 0] *= np.sign(U[:, 0] @ v)
    return U
