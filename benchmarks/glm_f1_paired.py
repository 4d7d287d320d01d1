"""Paired support F1 against abess (Poisson) or skglm (Huber) on many data sets of ``compare_glm.py``'s grid.

``compare_glm.py`` runs 8 data sets per setting: too few to tell a deficit of
0.02 from noise. This script fits only the methods a question needs, on
``--repeats`` data sets (seeds ``0 .. repeats - 1``, the same generator and
seeds as ``compare_glm.py``, so its data sets are the first 8; ``--first-seed``
shifts them to fresh ones), and prints per
setting the mean F1 and the mean per-data-set difference to the reference
with its standard error. It also refits the loss on each support found and
counts the data sets where a method's support has a lower loss than the
reference's and than the true support's: a method that reaches a lower loss
than the truth is limited by the data, not by its search. The last column is
the mean difference of the held-out mean deviance (1000 test rows) to the
reference's, with its standard error, then the total CPU time of the fits
over the reference's (the methods run one after the other on each data set).

* ``--family poisson``: ``IHTRegressor`` and ``IOBSRegressor``
  (``loss='poisson'``), the same without the splicing search
  (``splicing=False``: the solver's own support), against abess's
  ``PoissonRegression(support_size=[k])``; the loss is the Poisson loss;
* ``--family gamma``: the same as Poisson on the Gamma (log link) designs,
  the loss the Gamma loss, abess's ``GammaRegression`` as the peer
  (canonical link: misspecified there); ``--family gamma-inverse``: the
  same on the inverse-link designs (abess's link, ours misspecified);
* ``IOBS previous route``: ``IOBSRegressor`` with the Hessian route 'auto'
  chose before the screened (Poisson) and fisher (Gamma) routes
  (``'woodbury'`` when ``n < p + 1``, else ``'dense'``): the paired study of
  those changes (``--methods IOBS
  'IOBS previous route' --reference 'IOBS previous route'``; for Poisson at
  ``n >= p + 1``, 'dense' is the route before 'screened' became its default
  there);
* ``IOBS previous jump``: ``IOBSRegressor`` with the support jump after a
  kept support only (``_policy.IOBS_GLM_REFIT_FIRST`` False) and the dense
  Hessian from ``weighted_gram`` (``IOBS_CENTRED_COPY_MAX`` 0): I-OBS as
  before both (``--methods IOBS 'IOBS previous jump' --reference 'IOBS
  previous jump'``);
* Gamma at n < p + 1 (doc/changelog.rst, "I-OBS Gamma on wide data"):
  ``IOBS fisher full start`` (``_policy.IOBS_FISHER_SCREENED_START`` False:
  the full expected Hessian from the first step, the route before the
  screened start), ``IOBS fisher`` (``hessian='fisher'``), ``IOBS screened``
  (the observed Hessian's screened step) and ``IOBS screened fisher mixed``
  (the screened step of the expected Hessian with the observed Hessian in
  the correction's right-hand side): ``--methods IOBS 'IOBS fisher full
  start' --reference 'IOBS fisher full start'``;
* ``IHT switch 0``, ``IHT switch 0.05``: ``IHTRegressor`` keeping the second
  splicing search's support when its loss is lower by more than
  ``switch_gate`` 0 (any lower loss) or 0.05 instead of 0.1 (``splice``'s
  ``switch_gate``; ``--methods IHT 'IHT switch 0' --reference IHT``);
  ``IHT gate 0.1``: the first search's exchange gate (``splice``'s ``gate``)
  at 0.1 instead of 0.25, the switch gate left at 0.1;
* ``IHT patience 1``, ``IHT loose candidates``, ``IOBS loose candidates``:
  the estimator with a support-jump patience of 1 (I-OBS's is 1), or with candidate refits
  stopped at a Newton decrement of ``1e-2`` (``_policy.CANDIDATE_DECREMENT``
  is ``1e-3``): the paired studies of those options (``--methods IHT 'IHT
  patience 1' --reference IHT``);
* ``--family huber``: ``IHTRegressor`` / ``IOBSRegressor`` (``loss='huber'``)
  against skglm's Huber datafit with L1 and MCP at the penalty giving ``k``
  non-zeros (``compare_glm.PenaltyAtK``, the oracle threshold 1.35 noise
  standard deviations); the loss is ``HuberLoss(epsilon=1.35, scale=1)`` (the
  true noise scale). ``clean`` adds the F1 of ``IHTRegressor`` on 200 clean
  rows of the same design (the test rows: no outliers), squared error and
  Huber: what the same exact-k fit reaches without outliers.

    PYTHONPATH=. python benchmarks/glm_f1_paired.py --family poisson --repeats 400 \
        --settings 200,100,5,0.7,weak 200,100,5,0.0,strong
    PYTHONPATH=. python benchmarks/glm_f1_paired.py --family gamma --repeats 200 \
        --methods IOBS "IOBS previous route" IHT --reference "IOBS previous route"

``--methods`` fits only the named methods (default: all of the family's).
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


def _methods(family, k, n, p):
    from sparse_estimators import IHTRegressor, IOBSRegressor

    family = "gamma" if family == "gamma-inverse" else family
    out = {"IHT": lambda: IHTRegressor(k=k, loss=family), "IOBS": lambda: IOBSRegressor(k=k, loss=family)}
    if family in ("poisson", "gamma"):
        from abess.linear import GammaRegression, PoissonRegression

        peer = PoissonRegression if family == "poisson" else GammaRegression
        previous = "woodbury" if n < p + 1 else "dense"
        out["IHT no splicing"] = lambda: IHTRegressor(k=k, loss=family, splicing=False)
        out["IOBS no splicing"] = lambda: IOBSRegressor(k=k, loss=family, splicing=False)
        out["IOBS previous route"] = lambda: IOBSRegressor(k=k, loss=family, hessian=previous)
        out["abess"] = lambda: peer(support_size=[k], thread=1)
        out["IHT patience 1"] = lambda: _variant(IHTRegressor(k=k, loss=family), patience=1)  # (I-OBS's is 1)
        # the second search's support kept when its loss is lower by more than switch_gate (0: any lower loss)
        # instead of the regressors' 0.1 (doc/changelog.rst, "Poisson and Gamma switch gate")
        for gate in (0.0, 0.05):
            out[f"IHT switch {gate:g}"] = lambda gate=gate: _variant(IHTRegressor(k=k, loss=family),
                                                                    splice={"switch_gate": gate})
        # the exchange gate (both searches' first rules: 0.25) at 0.1, the switch gate left at 0.1
        out["IHT gate 0.1"] = lambda: _variant(IHTRegressor(k=k, loss=family), splice={"gate": 0.1})
        for name, Est in (("IHT", IHTRegressor), ("IOBS", IOBSRegressor)):
            out[name + " loose candidates"] = lambda Est=Est: _variant(Est(k=k, loss=family), decrement=1e-2)
        # I-OBS as before the cold start's early support jump and the dense Hessian from a centred copy of X
        out["IOBS previous jump"] = lambda: _variant(IOBSRegressor(k=k, loss=family),
                                                     policy={"IOBS_GLM_REFIT_FIRST": False,
                                                             "IOBS_CENTRED_COPY_MAX": 0})
        # Gamma's cheaper routes at n < p + 1 (doc/changelog.rst, "I-OBS Gamma routes"): the screened block
        # Newton step at the iterate, or with the expected Hessian (the sample shares) on that block
        out["IOBS screened"] = lambda: IOBSRegressor(k=k, loss=family, hessian="screened")
        out["IOBS screened fisher mixed"] = lambda: _variant(IOBSRegressor(k=k, loss=family, hessian="screened"),
                                                             curvature=_screened_fisher_curvature())
        out["IOBS fisher"] = lambda: IOBSRegressor(k=k, loss=family, hessian="fisher")
        out["IOBS fisher full start"] = lambda: _variant(IOBSRegressor(k=k, loss=family),
                                                         policy={"IOBS_FISHER_SCREENED_START": False})
    return out


def _screened_fisher_curvature():
    """``_GLMCurvature`` whose 'screened' route uses the expected Hessian (pointwise weights: the sample
    shares) instead of the Hessian at the iterate: the 'fisher' route restricted to the screened block."""
    from sparse_estimators.solvers._iobs_curvature import _GLMCurvature
    from sparse_estimators.solvers._iobs_linalg import _damping_scale

    class _ScreenedFisher(_GLMCurvature):
        def __init__(self, loss, route, damping, W, b, Z, cache, screen_rows=0):
            super().__init__(loss, route, damping, W, b, Z, cache, screen_rows)
            if route == "screened":
                p, m = self.p, self.m
                self.Hw = (loss.sample_weight / loss.sw_sum)[:, None, None] * np.eye(m)
                Hd = np.einsum("iaa->ia", self.Hw)
                dW = loss.design.column_moments(Hd).reshape(p, m) + loss.alpha
                self.diag = np.concatenate([dW.ravel(), Hd.sum(axis=0)]) if self.has_b else dW.ravel()
                self.lam = damping * _damping_scale(float(self.diag[: p * m].mean()) if p else 0.0)

    return _ScreenedFisher


class _variant:
    """``model`` fitted with another support-jump patience, candidate-refit decrement, policy values or
    splicing options (the studies of doc/changelog.rst, "Poisson and Gamma fit time"): ``fit`` returns the
    fitted ``model``."""

    def __init__(self, model, patience=None, decrement=None, policy=None, curvature=None, splice=None):
        self.model, self.patience, self.decrement = model, patience, decrement
        self.splice = dict(splice or {})
        self.curvature = curvature
        self.policy = dict(policy or {})
        if decrement is not None:
            self.policy["CANDIDATE_DECREMENT"] = decrement
        if patience is not None:  # (the _policy constant the estimator names)
            self.policy[type(model)._support_refit_patience] = patience

    def fit(self, X, y):
        from sparse_estimators import _policy

        if self.splice:  # (the instance's splicing options, updated: the class keeps its own)
            options = type(self.model)._splice_kwargs
            self.model._splice_kwargs = lambda loss, k: options(self.model, loss, k) | self.splice
        kept = {name: getattr(_policy, name) for name in self.policy}
        for name, value in self.policy.items():
            setattr(_policy, name, value)
        from sparse_estimators.solvers import _iobs

        kept_curvature = _iobs._GLMCurvature
        if self.curvature is not None:
            _iobs._GLMCurvature = self.curvature
        try:
            return self.model.fit(X, y)
        finally:
            _iobs._GLMCurvature = kept_curvature
            for name, value in kept.items():
                setattr(_policy, name, value)

    def predict(self, X):
        return self.model.predict(X)


def run_setting(family, n, p, k, rho, signal, repeats, methods=None, first_seed=0):
    from compare_glm import PenaltyAtK, f1, simulate

    from sparse_estimators import IHTRegressor
    from sparse_estimators.losses import GammaLoss, HuberLoss, PoissonLoss

    rows = []
    for seed in range(first_seed, first_seed + repeats):
        X, y, Xt, yt, truth = simulate("gamma-log" if family == "gamma" else family, n, p, k, rho, signal, 1000,
                                       seed)
        if family == "huber":
            loss = HuberLoss(X, y, epsilon=1.35, scale=1.0)
        else:
            loss = (PoissonLoss if family == "poisson" else GammaLoss)(X, y)  # (gamma, gamma-inverse)
        fits = {name: make() for name, make in _methods(family, k, n, p).items()
                if methods is None or name in methods}
        if family == "huber" and (methods is None or "skglm L1" in methods):
            for penalty in ("L1", "MCP"):
                fits["skglm " + penalty] = PenaltyAtK("huber", penalty, k, 1.35).tune(X, y)()
        row = {}
        for name, model in fits.items():
            start = time.process_time()
            fitted = model.fit(X, y)
            cpu = time.process_time() - start
            coef = getattr(fitted, "model", fitted).coef_
            support = np.flatnonzero(np.ravel(coef))
            W, b = loss.refit(support, np.zeros((p, 1)), loss.initial_intercept())
            row[name] = (f1(support, truth), float(loss.value(W, b)), _test_deviance(family, fitted, Xt, yt), cpu)
        W, b = loss.refit(truth, np.zeros((p, 1)), loss.initial_intercept())
        row["truth"] = (1.0, float(loss.value(W, b)), np.nan, np.nan)
        if family == "huber" and methods is None:
            for name, kind in (("clean squared_error", "squared_error"), ("clean huber", "huber")):
                support = np.flatnonzero(IHTRegressor(k=k, loss=kind).fit(Xt[:n], yt[:n]).coef_)
                row[name] = (f1(support, truth), np.nan, np.nan, np.nan)
        rows.append(row)
    return rows


def _test_deviance(family, model, Xt, yt):
    """Mean Poisson / Gamma deviance of ``model``'s predicted means on the held-out rows (NaN for Huber, or
    where a predicted mean is not positive: abess's inverse link)."""
    from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance

    if family == "huber":
        return np.nan
    mean = np.asarray(model.predict(Xt), dtype=float)
    if not np.all(np.isfinite(mean) & (mean > 0)):
        return np.nan
    return float((mean_poisson_deviance if family == "poisson" else mean_gamma_deviance)(yt, mean))


def report(rows, reference):
    names = list(rows[0])
    f1s = {m: np.array([r[m][0] for r in rows]) for m in names}
    obj = {m: np.array([r[m][1] for r in rows]) for m in names}
    dev = {m: np.array([r[m][2] for r in rows]) for m in names}
    cpu = {m: np.array([r[m][3] for r in rows]) for m in names}
    print(f"  data sets: {len(rows)}; reference: {reference}")
    print("  method | mean F1 | F1 - reference (+- SE) | loss < reference's | loss > reference's | loss < truth's | "
          "test deviance - reference's (+- SE) | CPU time / reference's")
    for m in names:
        if m == "truth":
            continue
        d = f1s[m] - f1s[reference]
        se = d.std(ddof=1) / np.sqrt(d.size)
        lower = int(np.sum(obj[m] < obj[reference] - 1e-9))
        higher = int(np.sum(obj[m] > obj[reference] + 1e-9))
        below_truth = int(np.sum(obj[m] < obj["truth"] - 1e-9))
        dd = (dev[m] - dev[reference])[np.isfinite(dev[m] - dev[reference])]
        ddev = f"{dd.mean():+.5f} +- {dd.std(ddof=1) / np.sqrt(dd.size):.5f}" if dd.size > 1 else "n/a"
        print(f"  {m} | {f1s[m].mean():.4f} | {d.mean():+.4f} +- {se:.4f} | {lower} | {higher} | {below_truth} | "
              f"{ddev} | {np.nansum(cpu[m]) / np.nansum(cpu[reference]) if np.isfinite(cpu[m]).any() else np.nan:.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--family", choices=("poisson", "gamma", "gamma-inverse", "huber"), default="poisson")
    parser.add_argument("--methods", nargs="+", default=None, help="the methods to fit (default: all)")
    parser.add_argument("--reference", default=None,
                        help="the method the differences are taken to (default: abess, IHT for huber)")
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first data set (fresh data sets)")
    parser.add_argument("--settings", nargs="+", default=None,
                        help="n,p,k,rho,signal each (default: compare_glm.py's 8 settings)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.settings:
        settings = [(int(n), int(p), int(k), float(rho), signal)
                    for n, p, k, rho, signal in (s.split(",") for s in args.settings)]
    else:
        settings = [(n, p, k, rho, signal) for n, p, k in ((200, 100, 5), (500, 1000, 10))
                    for rho in (0.0, 0.7) for signal in ("weak", "strong")]
    reference = args.reference or ("IHT" if args.family == "huber" else "abess")
    with threadpool_limits(1):
        for n, p, k, rho, signal in settings:
            print(f"{args.family} n={n} p={p} k={k} rho={rho} {signal}", flush=True)
            report(run_setting(args.family, n, p, k, rho, signal, args.repeats, args.methods,
                                       args.first_seed), reference)


if __name__ == "__main__":
    main()
