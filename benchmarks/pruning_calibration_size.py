"""Algorithm 2's rounds against the calibration set's size, with and without a held-out part (diabetes MLP).

The reproduction (``reproduce_paper004_pruning.py``) calibrates the diabetes
network on its whole training set (309 samples). Here each network is
pruned on random subsets of its training set of a few sizes (3 subsets per
network below 309), and the test R^2 of 'iobs' (layer-wise, and 3 rounds,
with ``validation_fraction`` None or 0.25) is compared with one-shot
SparseGPT ('obs') on the same subset: mean paired difference +- its
standard error over all fits. Also the median ratio of I-OBS's to
SparseGPT's relative layer error, on the calibration inputs and on the
test inputs (does lowering the layer objective on few samples overfit?).

Run: ``python benchmarks/pruning_calibration_size.py [--seeds 10]``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce_paper004_pruning import _diabetes, layer_errors  # noqa: E402

from sparse_estimators.pruning import prune_mlp  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--sizes", type=int, nargs="+", default=[40, 80, 150, 309])
    parser.add_argument("--sparsities", type=float, nargs="+", default=[0.5, 0.7])
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    nets = [_diabetes(seed) for seed in range(args.seeds)]
    variants = [("iobs 0 rounds", dict(method="iobs")),
                ("iobs 3 rounds", dict(method="iobs", n_rounds=3, use_y=True)),
                ("iobs 3 rounds, validation_fraction=0.25",
                 dict(method="iobs", n_rounds=3, use_y=True, validation_fraction=0.25))]
    print("test R^2 minus one-shot SparseGPT's on the same calibration subset (mean +- se over fits; > 0 / < 0)")
    with threadpool_limits(1):
        for sparsity in args.sparsities:
            for size in args.sizes:
                diffs = {name: [] for name, _ in variants}
                ratio_calib, ratio_test = [], []
                for seed, (_, net, Xtr, ytr, Xte, yte) in enumerate(nets):
                    for sub in range(3 if size < Xtr.shape[0] else 1):
                        rng = np.random.RandomState(1000 * seed + sub)
                        idx = (rng.choice(Xtr.shape[0], size, replace=False) if size < Xtr.shape[0]
                               else np.arange(Xtr.shape[0]))
                        Xc, yc = Xtr[idx], ytr[idx]
                        obs = prune_mlp(net, Xc, sparsity, method="obs")
                        base = obs.score(Xte, yte)
                        for name, kw in variants:
                            kw = dict(kw)
                            y = yc if kw.pop("use_y", False) else None
                            pruned = prune_mlp(net, Xc, sparsity, y=y, random_state=seed, **kw)
                            diffs[name].append(pruned.score(Xte, yte) - base)
                            if name == "iobs 0 rounds":
                                ratio_calib.append(np.divide(layer_errors(net, pruned, Xc),
                                                             np.maximum(layer_errors(net, obs, Xc), 1e-300)))
                                ratio_test.append(np.divide(layer_errors(net, pruned, Xte),
                                                            np.maximum(layer_errors(net, obs, Xte), 1e-300)))
                parts = []
                for name, _ in variants:
                    d = np.array(diffs[name])
                    parts.append(f"{name}: {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(d.size):.4f} "
                                 f"({np.sum(d > 0)} / {np.sum(d < 0)})")
                print(f"sparsity {sparsity:.0%}, {size} calibration samples ({len(diffs['iobs 0 rounds'])} fits): "
                      + "; ".join(parts))
                print(f"    median I-OBS / SparseGPT layer error per layer: calibration inputs "
                      f"{np.round(np.median(ratio_calib, axis=0), 3).tolist()}, test inputs "
                      f"{np.round(np.median(ratio_test, axis=0), 3).tolist()}")
    print(f"wall time {time.perf_counter() - t0:.0f} s (shared machine, one BLAS thread)")


if __name__ == "__main__":
    main()
