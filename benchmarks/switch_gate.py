"""The regressors' switch gate: when does abess's search replace the first one?

After the solver, the regressors' splicing runs two searches: exchanges from
the solver's support (gate 0.25), and abess's own search from the screening
start (see :func:`sparse_estimators.solvers.splice`). The second result
replaces the first when its loss is lower by more than ``switch_gate`` times
``d m log(p) s / N`` (``d`` the number of features in which they differ).
This script fits ``IHTRegressor(k=s)`` with several switch gates, and abess and
OMP, on fresh data sets of ``compare_peers.py``'s regression designs (repeat
indices from ``--first``, after the peer table's, the same seed rule) and
prints, per problem size and gate, the mean support F1 and the number of the
24 settings (rho, beta type, SNR) where the mean F1 is more than 0.01 below
the best peer's (the issue's target). The regressors' rule (``default``: 0.25
up to 3 observations per ``k log(p - k)``, 0.1 above) is chosen from it.

Usage::

    python benchmarks/switch_gate.py                      # 30 data sets per setting (2000 x 10000: 4)
    python benchmarks/switch_gate.py --repeats 5 --out gate.md
"""

import argparse
import itertools
import os
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bench_common import revision  # noqa: E402
from _peer_designs import simulate  # noqa: E402
from compare_peers import FULL, evaluate, make_methods  # noqa: E402

from sparse_estimators import IHTRegressor  # noqa: E402

GATES = (0.25, 0.15, 0.1, 0.05, 0.0)


def gated(gate):
    """``IHTRegressor`` whose splicing uses ``switch_gate=gate``."""
    return type(f"IHTRegressorSwitch{gate}", (IHTRegressor,),
                {"_splice_options": IHTRegressor._splice_options | {"switch_gate": gate}})


def run_size(n, p, s, repeats, first):
    """Per setting, the mean F1 of each gate, abess and OMP."""
    models = {gate: gated(gate) for gate in GATES} | {"default": IHTRegressor}
    peers = {name: factory for name, (_, factory) in make_methods("regression", s, 1, references=False).items()
             if name in ("abess", "OMP")}
    table = {}
    for rho, beta_type, snr in itertools.product((0.0, 0.35, 0.7), (1, 2), (0.5, 1.0, 3.0, 6.0)):
        scores = {key: [] for key in (*models, *peers)}
        for rep in range(first, first + repeats):
            seed = int(np.random.SeedSequence([n, p, s, int(rho * 100), beta_type, int(snr * 10), rep,
                                               True]).generate_state(1)[0])
            X, y, Xt, yt, beta = simulate("regression", n, p, s, rho, beta_type, snr, 1000, seed)
            fits = {gate: model(k=s) for gate, model in models.items()} | {name: f() for name, f in peers.items()}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for key, model in fits.items():
                    scores[key].append(evaluate("regression", model.fit(X, y), X, y, Xt, yt, beta, rho)["f1"])
        table[rho, beta_type, snr] = {key: float(np.mean(v)) for key, v in scores.items()}
    return table


def summarise(table):
    """Per gate: mean F1, settings more than 0.01 below the best peer, the largest deficit."""
    rows = []
    for gate in (*GATES, "default"):
        deficits = [max(t["abess"], t["OMP"]) - t[gate] for t in table.values()]
        rows.append((gate, np.mean([t[gate] for t in table.values()]), sum(d > 0.01 + 1e-12 for d in deficits),
                     max(deficits)))
    peers = {name: np.mean([t[name] for t in table.values()]) for name in ("abess", "OMP")}
    return rows, peers


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="data sets per setting (2000 x 10000: a seventh)")
    parser.add_argument("--first", type=int, default=1000, help="first repeat index (the peer table uses 0-9)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "doc", "peers",
                                                      "switch_gate.md"))
    args = parser.parse_args(argv)
    threadpool_limits(1)
    start = time.perf_counter()
    lines = []
    for n, p, s in FULL["sizes"]:
        repeats = max(1, args.repeats // 7) if n * p > 10**6 else args.repeats
        rows, peers = summarise(run_size(n, p, s, repeats, args.first))
        lines.append(f"\n### n = {n}, p = {p}, s = {s}: {repeats} data sets per setting, 24 settings\n")
        lines.append(f"abess mean F1 {peers['abess']:.4f}, OMP {peers['OMP']:.4f}.\n")
        lines.append("| switch_gate | mean F1 | settings > 0.01 below the best peer | largest deficit |")
        lines.append("|---|---|---|---|")
        lines += [f"| {g} | {f1:.4f} | {k}/24 | {d:+.4f} |" for g, f1, k, d in rows]
        print("\n".join(lines[-len(rows) - 4:]), flush=True)
    head = (f"# The regressors' switch gate\n\nGenerated by `python benchmarks/switch_gate.py --repeats "
            f"{args.repeats} --first {args.first}` at git {revision()} in {(time.perf_counter() - start) / 60:.1f} "
            "min (1 BLAS thread). `IHTRegressor(k=s)` with each `switch_gate` (the gate at which abess's search "
            "replaces the first splicing search; 0.25 is the exchange gate), abess and OMP on fresh data sets of "
            "`compare_peers.py`'s regression designs. Deficit: the best peer's mean F1 minus ours, per setting.\n")
    with open(args.out, "w") as f:
        f.write(head + "\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
