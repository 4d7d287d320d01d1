"""Layer-wise pruning: ``min ||X W^T - X W_hat^T||`` with a sparsity pattern per output row.

The layer problem is a least-squares loss on the layer's Gram matrix
``H = X^T X / n`` (:class:`~sparse_estimators.losses.GramSquaredLoss`, the
targets being the dense layer's outputs) with one sparse problem per output
row: :class:`~sparse_estimators.structures.PerOutput` (the same number of
inputs kept in every row) or :class:`~sparse_estimators.structures.NMPattern`
(N:M blocks). 'iobs' runs :func:`~sparse_estimators.solvers.iobs` on it from
the one-shot solution and keeps, per row, the best of its own, the one-shot
and the magnitude mask, each refitted; 'obs' is SparseGPT's column sweep
(Frantar & Alistarh, 2023), with the mask chosen per row.
"""

import numbers
import re

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .. import _policy
from .._utils import largest_magnitude, power_of_two_for
from ..losses import GramSquaredLoss
from ..solvers import iobs
from ..structures import NMPattern, PerOutput
from ..thresholding import Hard

__all__ = ["prune_layer", "layer_error"]

METHODS = ("magnitude", "wanda", "obs", "iobs")


def _parse_pattern(pattern):
    """``'2:4'`` or ``(2, 4)`` to ``(2, 4)``; None stays None."""
    if pattern is None:
        return None
    if isinstance(pattern, str):
        match = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", pattern)
        if match is None:
            raise ValueError(f"The 'pattern' parameter must be 'N:M' (e.g. '2:4') or a pair (N, M), got {pattern!r}.")
        n, m = int(match.group(1)), int(match.group(2))
    else:
        try:
            n, m = (int(v) for v in pattern)
        except (TypeError, ValueError):
            raise ValueError(f"The 'pattern' parameter must be 'N:M' (e.g. '2:4') or a pair (N, M), "
                             f"got {pattern!r}.") from None
    if not (m >= 1 and 0 <= n <= m):
        raise ValueError(f"The 'pattern' parameter needs 0 <= N <= M and M >= 1, got {n}:{m}.")
    return n, m


def _check_sparsity(sparsity, name="sparsity"):
    if isinstance(sparsity, bool) or not isinstance(sparsity, numbers.Real) or not 0 <= sparsity < 1:
        raise ValueError(f"The '{name}' parameter must be a number in [0, 1), got {sparsity!r}.")
    return float(sparsity)


def _structure(n_in, sparsity, pattern):
    """The layer's structure and the number of inputs kept per row."""
    nm = _parse_pattern(pattern)
    if nm is None:
        sparsity = _check_sparsity(sparsity)
        # as torch.nn.utils.prune: round(sparsity * n_in) entries pruned in each row
        return PerOutput(Hard()), n_in - int(round(sparsity * n_in))
    n, m = nm
    if sparsity is not None and abs(_check_sparsity(sparsity) - (1 - n / m)) > 1e-12:
        raise ValueError(f"With pattern={pattern!r} the sparsity is {1 - n / m:g}: pass sparsity=None "
                         f"(or {1 - n / m:g}), got {sparsity!r}.")
    structure = NMPattern(Hard(), n, m)
    if n_in % m:
        raise ValueError(f"The pattern {n}:{m} needs a number of inputs divisible by {m}; the layer has "
                         f"n_in={n_in} (W of shape (n_out, {n_in})).")
    return structure, structure.k_per_output(n_in)


def _sparse_input(X):
    """A scipy.sparse ``X`` as CSR or CSC float64 with sorted, unique entries; a copy only where one is needed.

    The caller's ``X`` is never changed (duplicates are summed in a copy).
    """
    if X.dtype != np.float64:  # (first: duplicates are then summed in float64)
        X = X.astype(np.float64)
    if X.format not in ("csr", "csc"):
        X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _gram(X):
    """``H = X^T X / n``, dense (p, p), float64.

    A scipy.sparse ``X`` is never densified: ``X^T X`` is its sparse product
    (at most ``p^2`` stored entries), written into ``H``, which is allocated
    first (a ``p`` too large for it fails at once, not after the product).
    """
    if sp.issparse(X):
        H = np.zeros((X.shape[1], X.shape[1]))
        (X.T @ X).toarray(out=H)
    else:
        H = X.T @ X
    H /= X.shape[0]  # (in place: the values of X.T @ X / n, without a second p x p array)
    return H


def _column_squares(X):
    """``sum_i x_ij^2`` for every input ``j``, shape (p,) (from the stored entries of a scipy.sparse ``X``)."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=0), dtype=float).ravel()
    return np.einsum("ij,ij->j", X, X)


def layer_error(W, W_hat, X):
    """Per-row reconstruction error ``||X (w_i - w_hat_i)||^2 / n`` of a pruned layer, shape (n_out,).

    Parameters
    ----------
    W, W_hat : ndarray of shape (n_out, n_in)
        Dense and pruned weights.
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_in)
        The layer's inputs (a sparse ``X`` is not densified).

    Returns
    -------
    ndarray of shape (n_out,)
    """
    if sp.issparse(X):  # (X D^T: sparse times dense, X is not densified)
        D = np.asarray(X @ (np.asarray(W, dtype=float) - np.asarray(W_hat, dtype=float)).T, dtype=float)
    else:
        D = np.asarray(X, dtype=float) @ (np.asarray(W, dtype=float) - np.asarray(W_hat, dtype=float)).T
    return np.einsum("ij,ij->j", D, D) / D.shape[0]


def _row_errors(W, W_hat, H):
    D = W - W_hat
    return np.einsum("ij,ij->i", D @ H, D)


def _singular_rows(A):
    """Indices of the matrices of the stack ``A`` (symmetric, positive semi-definite) singular to working precision."""
    top = np.max(np.diagonal(A, axis1=1, axis2=2), axis=1)
    try:
        pivots = np.diagonal(np.linalg.cholesky(A), axis1=1, axis2=2)
    except np.linalg.LinAlgError:  # (one not positive definite in floating point: that one, found one by one)
        if len(A) == 1:
            return np.zeros(1, dtype=int)
        return np.array([i for i in range(len(A)) if _singular_rows(A[i:i + 1]).size], dtype=int)
    return np.flatnonzero(np.min(pivots, axis=1) ** 2 <= _policy.PRUNING_SINGULAR * top)


def _regular(H):
    """Whether every principal submatrix of ``H`` is nonsingular to working precision.

    By Cauchy's interlacing, ``lambda_min(H_QQ) >= lambda_min(H)``, and a
    squared Cholesky pivot of ``H_QQ`` is at least ``lambda_min(H_QQ)``: one
    ``p x p`` eigenvalue spares the refits' per-row checks.
    """
    top = float(np.max(np.diag(H)))
    smallest = scipy.linalg.eigh(H, eigvals_only=True, subset_by_index=[0, 0])[0]
    return top > 0 and smallest > _policy.PRUNING_SINGULAR * top


def _refit_on_masks(W, H, C, W_masked, regular=False):
    """Per row, least squares on the mask of ``W_masked`` (``v_Q = H_QQ^{-1} (H w)_Q``), and the row errors.

    ``C = W @ H`` (``H w_i`` for every row), shared by the masks of one layer;
    ``regular``: :func:`_regular` of ``H`` (no row then needs the check below).

    The undamped layer objective ``(w - v)^T H (w - v)`` minimised over the
    row's non-zeros, by batched ``k x k`` solves in chunks of rows holding at
    most ``_policy.PER_OUTPUT_BLOCK_ENTRIES`` entries; a row whose ``H_QQ`` is singular
    to working precision (linearly dependent inputs on the mask) takes the
    minimum-norm least-squares solution instead. A row keeps ``W_masked``'s
    values where the refit is higher beyond rounding, so no row's error
    increases beyond rounding.

    Returns
    -------
    out : ndarray of the shape of ``W``
    errors : ndarray of shape (n_out,)
        ``_row_errors(W, out, H)``.
    """
    counts = np.count_nonzero(W_masked, axis=1)
    k = int(counts.max()) if counts.size else 0
    out = W_masked.copy()
    full = np.flatnonzero(counts == k) if k else np.zeros(0, dtype=int)
    support = np.nonzero(W_masked[full])[1].reshape(full.size, k)
    step = max(1, _policy.PER_OUTPUT_BLOCK_ENTRIES // max(k * k, 1))
    for s in range(0, full.size, step):
        q, rows = support[s:s + step], full[s:s + step, None]
        A, rhs = H[q[:, :, None], q[:, None, :]], C[rows, q]
        try:
            v = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
            # a numerically singular H_QQ (e.g. proportional inputs both kept) is not refused by the LU solve: it
            # returns weights of up to 1e20, whose rounding in (w - v)^T H (w - v) dwarfs the row's error (even
            # computed negative, so kept); such rows (a Cholesky pivot at rounding level) take the minimum norm
            unsure = np.zeros(0, dtype=int) if regular else _singular_rows(A)
        except np.linalg.LinAlgError:  # (an exactly singular block: the minimum-norm least-squares solution per row)
            v, unsure = np.empty_like(rhs), np.arange(rhs.shape[0])
        for i in unsure:
            v[i] = np.linalg.lstsq(A[i], rhs[i], rcond=None)[0]
        out[rows, q] = v
        del A  # (freed before the next chunk's gather: both were held at once)
    for i in np.flatnonzero((counts < k) & (counts > 0)):  # (fewer non-zeros: a kept weight was 0)
        q = np.flatnonzero(W_masked[i])
        out[i, q] = np.linalg.lstsq(H[np.ix_(q, q)], C[i, q], rcond=None)[0]
    errors, before = _row_errors(W, out, H), _row_errors(W, W_masked, H)
    # (the refit unless its error is higher beyond rounding, relative to the row's w^T H w: where W_masked is
    # itself nearly that refit, a strict test would pick either by rounding, not by the row)
    bad = ~(errors <= before + 1e-9 * np.einsum("ij,ij->i", C, W))  # (an O(m p) product, not C's O(m p^2))
    out[bad], errors[bad] = W_masked[bad], before[bad]
    return out, errors


def _best_rows(*candidates):
    """Per row, the candidate ``(weights, row errors)`` of lowest error (ties: the first)."""
    errors = np.array([e for _, e in candidates])
    best = np.argmin(errors, axis=0)
    rows = np.arange(errors.shape[1])
    return np.stack([c for c, _ in candidates])[best, rows], errors[best, rows]


def _mask_by_scores(W, scores, structure, k):
    """``W`` with, in each row, only the entries the structure keeps by ``|scores|`` (n_out, n_in)."""
    support = structure.support(scores.T, k)  # (n_out, k)
    out = np.zeros_like(W)
    rows = np.arange(W.shape[0])[:, None]
    out[rows, support] = W[rows, support]
    return out


def _sparsegpt(W, H, k, nm, damping, blocksize):
    """SparseGPT's column sweep (Frantar & Alistarh 2023, Algorithm 1) with ``k`` inputs kept per row.

    ``H`` is damped by ``damping * mean(diag H)`` (percdamp; inputs with
    ``H_jj = 0``, never active, count 0 there, not the 1 SparseGPT's code puts
    on their diagonal); their weights are zeroed first. The upper Cholesky factor
    ``U`` of ``H^{-1}`` gives, at column ``i``, the row ``U_i`` of the OBS
    update after the columns before ``i`` are fixed. Masks are chosen per
    block of ``blocksize`` columns by the OBS saliency ``w^2 / U_ii^2``:
    each row prunes its smallest ``round(n_prune * i2 / n_in) - round(n_prune
    * i1 / n_in)`` entries of the block ``[i1, i2)`` (so exactly ``n_in - k``
    per row overall), or, for N:M, the ``M - N`` smallest of each group of
    ``M`` columns, selected when the sweep reaches the group.
    """
    W = W.copy()
    n_out, n_in = W.shape
    H = H.copy()
    dead = np.diag(H) == 0
    # lambda from H's own diagonal (zeros included) and the dead inputs' diagonal on its scale: SparseGPT's
    # 1 there entered both lambda and the singularity test below, so results changed with the calibration scale
    mean = float(np.mean(np.diag(H)))
    H[dead, dead] = mean if mean > 0 else 1.0
    W[:, dead] = 0.0
    H[np.diag_indices_from(H)] += damping * mean
    try:
        L = scipy.linalg.cholesky(H, lower=True)
        # (singular to working precision)
        if float(np.min(np.diag(L))) ** 2 <= _policy.PRUNING_SINGULAR * float(np.max(np.diag(H))):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        raise ValueError("The layer's Hessian X^T X / n is singular (inputs linearly dependent on the calibration "
                         f"data) and damping={damping!r} does not make it positive definite: SparseGPT's sweep "
                         "needs its inverse; use a damping > 0 (e.g. 0.01, the default).") from None
    Hinv = scipy.linalg.cho_solve((L, True), np.eye(n_in))
    U = scipy.linalg.cholesky(Hinv, lower=False)  # H^{-1} = U^T U
    n_prune = n_in - k
    rows = np.arange(n_out)[:, None]
    for i1 in range(0, n_in, blocksize):
        i2 = min(i1 + blocksize, n_in)
        W1 = W[:, i1:i2].copy()
        Q1 = np.zeros_like(W1)
        E1 = np.zeros_like(W1)
        U1 = U[i1:i2, i1:i2]
        d = np.diag(U1)
        mask = np.zeros(W1.shape, dtype=bool)  # True: pruned
        if nm is None:
            c = int(round(n_prune * i2 / n_in)) - int(round(n_prune * i1 / n_in))
            if c > 0:
                score = W1**2 / d**2
                mask[rows, np.argsort(score, axis=1, kind="stable")[:, :c]] = True
        for i in range(i2 - i1):
            if nm is not None and i % nm[1] == 0:
                score = W1[:, i:i + nm[1]] ** 2 / d[i:i + nm[1]] ** 2
                drop = nm[1] - nm[0]
                if drop > 0:
                    mask[rows, i + np.argsort(score, axis=1, kind="stable")[:, :drop]] = True
            w = W1[:, i]
            q = np.where(mask[:, i], 0.0, w)
            Q1[:, i] = q
            err = (w - q) / d[i]
            W1[:, i:] -= np.outer(err, U1[i, i:])
            E1[:, i] = err
        W[:, i1:i2] = Q1
        W[:, i2:] -= E1 @ U[i1:i2, i2:]
    return W


def prune_layer(W, X, sparsity, *, method="iobs", pattern=None, damping=0.01, blocksize=128, max_iter=20,
                tol=1e-6):
    """Prune a layer's weights to minimise the change of its outputs on calibration inputs.

    Solves, approximately, ``min ||X W^T - X W_hat^T||_F^2`` over ``W_hat``
    with the same number of inputs kept in every output row (as OBC and
    SparseGPT do) or with the N:M pattern. Each row is a sparse least-squares
    problem with the same Hessian ``H = X^T X / n``.

    Parameters
    ----------
    W : array-like or scipy.sparse matrix of shape (n_out, n_in)
        The layer's weights (``torch.nn.Linear.weight``; the transpose of a
        scikit-learn MLP's ``coefs_[i]``); a sparse ``W`` is made dense.
    X : array-like or scipy.sparse matrix of shape (n_samples, n_in)
        The layer's inputs on calibration data. A sparse ``X`` (any format;
        CSR and CSC are used as they are, others converted to CSR; float64,
        duplicate entries summed, in a copy where needed: ``X`` itself is
        not changed) is never densified: 'magnitude' uses none of its
        values, 'wanda' the sums of squares of its columns, 'obs' and 'iobs'
        form ``H = X^T X / n`` (a dense ``n_in x n_in`` array, from the
        sparse product ``X^T X``) and the layer's outputs ``X W^T`` (dense,
        ``n_samples x n_out``). The results equal those on ``X.toarray()``
        to rounding.
    sparsity : float in [0, 1) or None
        The fraction of weights removed in every row: ``round(sparsity *
        n_in)`` entries per row (as ``torch.nn.utils.prune``). With a
        ``pattern``, None (or ``1 - N / M``).
    method : {'iobs', 'obs', 'wanda', 'magnitude'}, default='iobs'
        * 'magnitude': keep the largest ``|W_ij|`` of each row;
        * 'wanda': keep the largest ``|W_ij| ||x_j||`` of each row (Sun et
          al., 2023); neither changes the kept weights;
        * 'obs': one-shot OBS, SparseGPT's column-by-column sweep with the
          Cholesky factor of ``H^{-1}`` (Frantar & Alistarh, 2023; OBC's
          updates, Frantar & Alistarh, 2022), masks chosen per row;
        * 'iobs': exact-k I-OBS (:func:`~sparse_estimators.solvers.iobs`,
          Wu et al., Algorithm 1 with the OBS correction) on the layer
          objective, started from the 'obs' solution; every row then keeps
          the lowest error of three masks, each refitted by least squares
          on it (the undamped objective): I-OBS's, 'obs''s and
          'magnitude''s. So on every row it is never worse than 'obs' or
          'magnitude' (to rounding), and each row is least squares on its
          mask. 'obs' can be worse than 'magnitude' on single rows (see
          the user guide); 'iobs' is the method to use.
    pattern : str or (int, int) or None, default=None
        ``'N:M'`` (e.g. ``'2:4'``): at most ``N`` non-zeros in every block of
        ``M`` consecutive inputs of each row; ``n_in`` must be a multiple of
        ``M``.
    damping : float, default=0.01
        ``lambda = damping * mean(diag H)`` added to the diagonal of ``H``
        for 'obs' (SparseGPT's ``percdamp``) and 'iobs' (its Newton steps
        and restricted solves; the objective itself is undamped).
    blocksize : int, default=128
        SparseGPT's block of columns (masks are chosen per block; lazy
        updates). With a ``pattern``, rounded up to a multiple of ``M``
        (a block holds whole groups). Unstructured, every row prunes the
        same number of entries in each block: small blocks leave the mask
        little choice (at 1, the same columns are pruned in every row).
    max_iter : int, default=20
        I-OBS iterations.
    tol : float, default=1e-6
        I-OBS stops when the supports are unchanged and the relative change
        of the weights is at most ``tol``.

    Returns
    -------
    W_hat : ndarray of shape (n_out, n_in)
        The pruned weights (float64).

    Raises
    ------
    ValueError
        On a ``sparsity`` outside [0, 1), an unknown ``method``, a
        ``pattern`` whose ``M`` does not divide ``n_in``, ``X`` whose
        width is not ``n_in`` or with no row, a ``blocksize`` below 1, a negative
        ``max_iter`` or ``tol``, or, for 'obs' and 'iobs', ``damping=0``
        with a singular ``H`` (linearly dependent inputs; inputs that are
        always 0 are handled).
    MemoryError
        For 'obs' and 'iobs', when ``H`` (``8 n_in^2`` bytes) cannot be
        allocated (the message names the method; 'wanda' and 'magnitude'
        form no ``H``).

    Notes
    -----
    Cost, with ``n`` calibration samples, ``p = n_in``, ``m = n_out`` and
    ``k`` kept inputs per row: forming ``H`` is ``O(n p^2)`` (all methods
    but 'magnitude'); 'obs' adds one Cholesky factorisation of ``H`` and of
    ``H^{-1}`` (``O(p^3)``, shared by the rows) and the sweep, ``O(m p^2)``,
    vectorised over the rows; each I-OBS iteration costs a solve with the
    shared Cholesky factor of ``H + lambda I`` for all rows (``O(m p^2)``)
    and one ``k x k`` restricted solve per row, batched (``O(m k^3)``);
    the three final refits cost as much as three such restricted solves.
    Memory: 'obs' and 'iobs' hold ``H`` and a few other ``n_in x n_in``
    arrays (its Cholesky factors); a sparse ``X`` adds the sparse product
    ``X^T X`` (at most ``n_in^2`` stored entries) while ``H`` is formed.
    'iobs' also gathers the rows' ``k x k`` blocks of ``H`` for its
    restricted solves, 32 MiB at a time. No method copies a float64 ``X``
    (only a conversion, or a rescaling beyond ``2^+-20``, does);
    'magnitude' and 'wanda' hold a few arrays of ``W``'s size.

    'obs' and 'iobs' depend on the order of the inputs (SparseGPT's sweep goes
    through them left to right, and I-OBS starts from its result):
    permuting the columns of ``W`` and ``X`` alike can give other masks
    (and errors: some rows better, some worse), whereas 'magnitude' and
    'wanda' permute their masks with the inputs (see the changelog).

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators.pruning import prune_layer
    >>> rng = np.random.default_rng(0)
    >>> X, W = rng.normal(size=(200, 8)), rng.normal(size=(3, 8))
    >>> W_hat = prune_layer(W, X, 0.5)
    >>> (W_hat != 0).sum(axis=1).tolist()
    [4, 4, 4]
    >>> W_24 = prune_layer(W, X, None, pattern="2:4")
    >>> (W_24.reshape(3, 2, 4) != 0).sum(axis=2).max().item()
    2
    """
    # (no copy of a float64 W: no method writes to it, and the unpruned one returned below is copied)
    W = np.asarray(W.toarray() if sp.issparse(W) else W, dtype=float)
    if W.ndim != 2:
        raise ValueError(f"W must be a 2-D array (n_out, n_in), got shape {W.shape}.")
    X = _sparse_input(X) if sp.issparse(X) else np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != W.shape[1]:
        raise ValueError(f"X must have shape (n_samples, n_in) with n_in={W.shape[1]} (the columns of W), got "
                         f"shape {X.shape}.")
    if X.shape[0] == 0:  # (H = X^T X / 0: 'wanda' kept the first inputs, 'obs' failed on NaN)
        raise ValueError("X has 0 samples: prune_layer needs at least one calibration input (a row of X).")
    # the largest magnitudes (max and min reductions: no |X| or boolean copy of X) give both the finiteness check
    # and the rescaling below
    w_top, x_top = largest_magnitude(W), largest_magnitude(X.data if sp.issparse(X) else X)
    if not (np.isfinite(w_top) and np.isfinite(x_top)):
        raise ValueError("W and X must be finite (no NaN or infinity).")
    if method not in METHODS:
        raise ValueError(f"The 'method' parameter must be one of {METHODS}, got {method!r}.")
    if not (isinstance(damping, numbers.Real) and np.isfinite(damping) and damping >= 0):
        raise ValueError(f"The 'damping' parameter must be a finite number >= 0, got {damping!r}.")
    # (a blocksize <= 0 made the sweep skip every column: W came back unpruned, silently)
    for name, value, low in (("blocksize", blocksize, 1), ("max_iter", max_iter, 0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"The '{name}' parameter must be an integer >= {low}, got {value!r}.")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"The 'tol' parameter must be a finite number >= 0, got {tol!r}.")
    structure, k = _structure(W.shape[1], sparsity, pattern)
    if k >= W.shape[1]:
        return W.copy()
    if k == 0:
        return np.zeros_like(W)
    # the problem is solved on W and X rescaled by powers of two (exact; 1 unless beyond 2^+-20): at 1e+-160,
    # H = X^T X / n and the saliencies W^2 overflowed or underflowed (a NaN error, or every weight pruned)
    w_scale, x_scale = power_of_two_for(w_top), power_of_two_for(x_top)
    if x_scale != 1.0:
        X = X * x_scale
    if w_scale == 1.0:
        return _prune(W, X, structure, k, method, damping, blocksize, max_iter, tol)
    return _prune(W * w_scale, X, structure, k, method, damping, blocksize, max_iter, tol) / w_scale


def _prune(W, X, structure, k, method, damping, blocksize, max_iter, tol):
    """:func:`prune_layer` on checked input, with ``0 < k < n_in`` inputs kept per row."""
    nm = (structure.n, structure.m) if isinstance(structure, NMPattern) else None
    # (the structure ranks |scores|: W itself, and W times the column norms, whose magnitudes are |W_ij| ||x_j||
    # exactly; np.abs(W) first was one more array of W's size)
    if method == "magnitude":
        return _mask_by_scores(W, W, structure, k)
    if method == "wanda":
        return _mask_by_scores(W, W * np.sqrt(_column_squares(X)), structure, k)
    try:
        H = _gram(X)
    except MemoryError:
        p = X.shape[1]
        raise MemoryError(f"method={method!r} needs the layer's Hessian H = X^T X / n, a dense {p} x {p} array "
                          f"({8e-9 * p * p:.3g} GB), which could not be allocated; 'wanda' and 'magnitude' form no "
                          "H (only the column norms of X, or nothing).") from None
    if nm is not None:  # (a block must hold whole groups of M: a group split by a block was chosen in part twice)
        blocksize = -(-int(blocksize) // nm[1]) * nm[1]
    start = _sparsegpt(W, H, k, nm, damping, int(blocksize))
    if method == "obs":
        return start
    # (the loss on the H formed above: its constructor formed X^T X / n a second time, in blocks of rows (for a
    # sparse X, from a scaled copy of X): equal to rounding)
    loss = GramSquaredLoss._from_gram(X, X @ W.T, H)
    b0 = np.zeros(W.shape[0])
    result = iobs(loss, structure, k, W0=start.T, b0=b0, max_iter=max_iter, tol=tol, damping=damping,
                  hessian="dense")
    # Per row, the lowest error of three masks, each refitted by least squares on it: I-OBS's (it lowers
    # the sum over the rows, not each row, and its damped correction stops short of the refit), the sweep's
    # and magnitude pruning's, which I-OBS's local search had ended above on some rows
    # (doc/changelog.rst, "I-OBS layer pruning never worse than magnitude pruning").
    C, regular = W @ H, _regular(H)
    return _best_rows(_refit_on_masks(W, H, C, result.coef.T, regular), _refit_on_masks(W, H, C, start, regular),
                      _refit_on_masks(W, H, C, _mask_by_scores(W, W, structure, k), regular))[0]
