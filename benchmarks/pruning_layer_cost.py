"""Time and peak memory of :func:`~sparse_estimators.pruning.prune_layer` per method on one layer.

A layer of ``W`` (n_out x n_in, Gaussian) with calibration inputs ``X``
(n_samples x n_in): ``dense``, ReLU activations of correlated Gaussians
(about half zeros, as a hidden layer's inputs); ``csr``, a scipy CSR matrix
of density 5 % (a bag-of-words first layer). Every measurement runs in a
fresh subprocess with one BLAS thread: the wall time of one call, then the
peak of the memory traced by ``tracemalloc`` (NumPy's buffers included)
during a second call, from its start to its end (the inputs, built before,
are excluded), and a hash of the output (to check that two trees give the
same bits). ``layer_error`` is measured the same way (on the magnitude
solution).

``--trees A B ...`` runs each measurement once per tree (its directory put
first on ``PYTHONPATH``), interleaved (tree A, tree B, tree A, ...), and
prints the ratio of each tree's median to the first tree's.

Run: ``python benchmarks/pruning_layer_cost.py --trees <before> <after>``
(``--n-out 512 --n-in 1024 --n-samples 2048`` is the default size;
``--methods``, ``--inputs``, ``--pattern 2:4``, ``--repeat``; ``--calls 1``
times the traced call instead of a separate one, for slow runs).
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

METHODS = ("magnitude", "wanda", "obs", "iobs", "layer_error")


def _data(kind, n_out, n_in, n_samples, seed=0):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n_out, n_in)) / np.sqrt(n_in)
    if kind == "dense":
        rank = 32
        Z = rng.normal(size=(n_samples, rank)) @ rng.normal(size=(rank, n_in)) / np.sqrt(rank)
        X = np.maximum(Z + rng.normal(size=(n_samples, n_in)), 0.0)
    else:
        X = sp.random(n_samples, n_in, density=0.05, format="csr", random_state=seed,
                      data_rvs=lambda size: np.abs(rng.normal(size=size)))
    return W, X


def _child(args):
    from threadpoolctl import threadpool_limits

    from sparse_estimators.pruning import layer_error, prune_layer

    W, X = _data(args.inputs[0], args.n_out, args.n_in, args.n_samples)
    method = args.methods[0]
    sparsity = None if args.pattern else 0.5
    if method == "layer_error":
        W_hat = prune_layer(W, X, sparsity, method="magnitude", pattern=args.pattern)

        def call():
            return layer_error(W, W_hat, X)
    else:
        def call():
            return prune_layer(W, X, sparsity, method=method, pattern=args.pattern)
    with threadpool_limits(1):
        if args.calls == 2:
            start = time.perf_counter()
            out = call()
            seconds = time.perf_counter() - start
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        again = call()
        if args.calls == 1:
            seconds, out = time.perf_counter() - start, again
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    same = bool(np.array_equal(out, again))
    digest = hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()[:16]
    print(json.dumps(dict(seconds=seconds, peak=peak, hash=digest, repeatable=same)))


def _run(tree, method, inputs, args):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([tree] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                   if p]))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--methods", method, "--inputs", inputs,
           "--n-out", str(args.n_out), "--n-in", str(args.n_in), "--n-samples", str(args.n_samples)]
    if args.pattern:
        cmd += ["--pattern", args.pattern]
    cmd += ["--calls", str(args.calls)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="+", default=[os.path.dirname(os.path.dirname(os.path.abspath(__file__)))])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--inputs", nargs="+", default=["dense", "csr"], choices=["dense", "csr"])
    parser.add_argument("--n-out", type=int, default=512)
    parser.add_argument("--n-in", type=int, default=1024)
    parser.add_argument("--n-samples", type=int, default=2048)
    parser.add_argument("--pattern", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2, choices=[1, 2],
                        help="1: time the traced call (for slow runs; tracemalloc's cost is then in the time)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    print(f"W {args.n_out} x {args.n_in}, X {args.n_samples} x {args.n_in}, "
          f"{'pattern ' + args.pattern if args.pattern else 'sparsity 0.5'}, one BLAS thread, {args.repeat} "
          "interleaved runs per tree (median time; peak of tracemalloc, MB)")
    for inputs in args.inputs:
        for method in args.methods:
            runs = {tree: [] for tree in args.trees}
            for _ in range(args.repeat):
                for tree in args.trees:
                    runs[tree].append(_run(tree, method, inputs, args))
            first = args.trees[0]
            t0 = np.median([r["seconds"] for r in runs[first]])
            m0 = max(r["peak"] for r in runs[first])
            parts = []
            for i, tree in enumerate(args.trees):
                t = float(np.median([r["seconds"] for r in runs[tree]]))
                m = max(r["peak"] for r in runs[tree])
                hashes = sorted({r["hash"] for r in runs[tree]})
                part = f"tree {i}: {t:8.3f} s {m / 1e6:8.1f} MB [{','.join(hashes)}]"
                if i:
                    part += f" (time x{t / t0:.2f}, peak x{m / m0:.2f})"
                parts.append(part)
            print(f"{inputs:5s} {method:11s} " + "; ".join(parts), flush=True)


if __name__ == "__main__":
    main()
