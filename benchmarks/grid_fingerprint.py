"""Bit-for-bit fingerprints of the peer grid's fits, to check that a backend change alters nothing.

Fits the package's eight estimators at ``k = s`` on the data sets of
``benchmarks/compare_peers.py`` (its ``simulate``: AR(1) designs, both beta
types, every rho and SNR) and records, per fit, a SHA-256 of the bytes of
``coef_``, ``intercept_`` and ``support_``. Two runs on the same machine (and
the same BLAS) are compared with ``--compare``: a refactor that claims "no
change in behaviour" must give identical fingerprints.

Usage::

    python benchmarks/grid_fingerprint.py --out before.json          # at the old revision
    python benchmarks/grid_fingerprint.py --out after.json           # at the new one
    python benchmarks/grid_fingerprint.py --compare before.json after.json

``--sizes`` chooses the problem sizes (``n,p,s`` triples); the default skips
``2000 x 10000`` (minutes per estimator), which ``--full`` adds with one data
set per setting.
"""

import argparse
import hashlib
import itertools
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _peer_designs import simulate  # noqa: E402
from compare_peers import FULL, OURS  # noqa: E402


def fingerprint(model):
    """SHA-256 of the fitted coefficients, intercept and support."""
    digest = hashlib.sha256()
    for name in ("coef_", "intercept_", "support_"):
        digest.update(np.ascontiguousarray(np.asarray(getattr(model, name))).tobytes())
    return digest.hexdigest()[:20]


def run(sizes, repeats, tasks):
    rows = {}
    for task in tasks:
        for (n, p, s), rho, beta_type, snr in itertools.product(sizes, FULL["rhos"], FULL["beta_types"],
                                                                 FULL["snrs"]):
            reps = repeats if p < 10000 else 1
            for seed in range(reps):
                X, y, *_ = simulate(task, n, p, s, rho, beta_type, snr, 10, seed)
                for name, cls in OURS[task].items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = cls(k=s).fit(X, y)
                    rows[f"{task}|{n},{p},{s}|{rho}|{beta_type}|{snr}|{seed}|{name}"] = fingerprint(model)
        print(f"{task}: {sum(key.startswith(task) for key in rows)} fits", file=sys.stderr, flush=True)
    return rows


def compare(a_path, b_path):
    a, b = json.loads(Path(a_path).read_text()), json.loads(Path(b_path).read_text())
    common = sorted(set(a) & set(b))
    differ = [key for key in common if a[key] != b[key]]
    print(f"{len(common)} fits in both, {len(differ)} differ"
          f" ({len(set(a) ^ set(b))} in only one of the files)")
    by_method = {}
    for key in differ:
        by_method.setdefault(key.rsplit("|", 1)[1], []).append(key)
    for method, keys in sorted(by_method.items()):
        print(f"  {method}: {len(keys)} differ, e.g. {keys[0]}")
    return 1 if differ else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="write the fingerprints (JSON) here")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two fingerprint files")
    parser.add_argument("--sizes", default="100,1000,10;500,100,5;500,1000,10",
                        help="problem sizes 'n,p,s;n,p,s' (default: all but 2000 x 10000)")
    parser.add_argument("--full", action="store_true", help="add 2000,10000,20 (one data set per setting)")
    parser.add_argument("--repeats", type=int, default=2, help="data sets per setting (default 2)")
    parser.add_argument("--task", choices=("regression", "classification", "both"), default="both")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    sizes = [tuple(int(v) for v in part.split(",")) for part in args.sizes.split(";") if part]
    if args.full:
        sizes.append((2000, 10000, 20))
    tasks = ("regression", "classification") if args.task == "both" else (args.task,)
    start = time.perf_counter()
    rows = run(sizes, args.repeats, tasks)
    text = json.dumps(rows, indent=0, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text)
    print(f"{len(rows)} fits in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
