"""Hashes of the Poisson and Gamma fits, to check that a speed change leaves them bit-identical.

``grid_fingerprint.py`` covers squared error, logistic and multinomial
losses; this covers ``loss='poisson'`` and ``loss='gamma'`` for the four
regressors on :source:`benchmarks/compare_glm.py`'s designs (``simulate``:
n, p, k in (200, 100, 5), (500, 300, 10) and (150, 400, 5), the last on
I-OBS's wide-data routes (screened for Poisson, fisher for Gamma); rho 0 and 0.5; 5 seeds, weak and strong signal
alternating), plus I-OBS on sparse and dense ``X`` at n = 150, p = 400.
Printed: one hash per loss and estimator of ``coef_``, ``intercept_`` and
``n_iter_``. Compare the output before and after a change on the same
machine, with ``OMP_NUM_THREADS=1`` (the hashes depend on the BLAS kernels).

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/glm_fingerprint.py
"""

import hashlib
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from compare_glm import simulate  # noqa: E402

from sparse_estimators import (  # noqa: E402
    AcceleratedIHTRegressor,
    IHTRegressor,
    IOBSRegressor,
    RegularizedIHTRegressor,
)

ESTIMATORS = {"IHT": IHTRegressor, "IOBS": IOBSRegressor, "AIHT": AcceleratedIHTRegressor,
              "RIHT": RegularizedIHTRegressor}


def main():
    warnings.simplefilter("ignore")
    hashes = {}

    def add(name, model):
        h = hashes.setdefault(name, hashlib.sha256())
        h.update(np.ascontiguousarray(model.coef_).tobytes())
        h.update(np.asarray(model.intercept_).tobytes())
        h.update(str(getattr(model, "n_iter_", "")).encode())

    for family, loss in (("poisson", "poisson"), ("gamma-log", "gamma")):
        for n, p, k in ((200, 100, 5), (500, 300, 10), (150, 400, 5)):
            for rho in (0.0, 0.5):
                for seed in range(5):
                    X, y, *_ = simulate(family, n, p, k, rho, "strong" if seed % 2 else "weak", 1, seed)
                    for name, Estimator in ESTIMATORS.items():
                        add(f"{loss} {name}", Estimator(k=k, loss=loss).fit(X, y))
        for seed in range(4):  # sparse X (CSR, CSC) beside the same dense X
            rng = np.random.RandomState(seed)
            X = rng.standard_normal((150, 400)) * (rng.rand(150, 400) < 0.3)
            eta = X[:, :5] @ np.full(5, 0.4)
            y = rng.poisson(np.exp(eta + 0.5)) if loss == "poisson" else rng.gamma(5.0, np.exp(eta) / 5.0)
            for Xf in (X, sp.csr_matrix(X), sp.csc_matrix(X)):
                add(f"{loss} IOBS sparse", IOBSRegressor(k=5, loss=loss).fit(Xf, y))
    for name, h in hashes.items():
        print(f"{name}: {h.hexdigest()}")


if __name__ == "__main__":
    main()
