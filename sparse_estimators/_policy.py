"""Tuned policy: the package's size limits, gates, tolerances and patience, in one reviewed place.

Every module reads these at use time (``from .. import _policy``, then
``_policy.NAME``), never a copy, so that one ``monkeypatch.setattr(_policy,
NAME, value)`` changes the behaviour everywhere. How a value was chosen (the
benchmark figures) is in ``doc/changelog.rst`` or the benchmark's page in
``doc/``; each comment points there. ``tests/test_policy.py`` checks that no
other module defines one of these names or a new numeric constant, and that
no estimator class holds a number in a private class attribute (a class
names the constant it uses instead).
"""

# -- sparse solvers and the splicing search -----------------------------------------------------------------

#: on a stable support, the shrinking operators' step grows only when the accepted step used at most this
#: share of the quadratic model's allowance (solvers/_base.py; doc/changelog.rst, ``_STABLE_GROWTH_RATIO``)
STABLE_GROWTH_RATIO = 0.05
#: regularized IHT's adaptive step grows at most to this multiple of its start (a bound, not a tuned value)
STEP_GROWTH_CAP = 2.0 ** 30
#: abess's search runs on :class:`~sparse_estimators.losses._squared_search.LazyGramSquaredLoss` for a dense
#: X of at most this many rows (doc/changelog.rst, "Small plain fits": the times at n = 600 to 2000)
MAX_ROWS = 1000
#: a pointwise loss's candidate refit stops at a Newton decrement of this times ``1 + |f|`` (the value within
#: 9e-8 of the minimum; doc/changelog.rst, "Poisson, Gamma and Huber refits")
CANDIDATE_DECREMENT = 1e-3
#: a candidate whose quadratic model raises the loss by more than this times the decrease it needs is not
#: refitted (doc/changelog.rst, "Poisson and Gamma splicing", ``SCREEN_MARGIN``)
SCREEN_MARGIN = 0.5
#: candidate refits remembered per loss object (the two splicing searches pass through the same supports);
#: cleared when full (a memory bound, not tuned)
CANDIDATE_CACHE = 256
#: the logistic and multinomial losses refuse a candidate whose value lies more than this many Newton decrements
#: above the value it must get below (doc/changelog.rst, ``REJECT_DECREMENTS = 4``: 4316 binary and 1992
#: multinomial stops measured)
REJECT_DECREMENTS = 4.0

# -- groups: the unit search of solvers/_splice_groups.py ---------------------------------------------------

#: the units' blocks are formed in one stack padded to the largest unit while it holds at most this many
#: times the unpadded entries (doc/changelog.rst, ``UNIT_PADDING = 4``: 2.4 for sizes 2 to 10, not tuned)
UNIT_PADDING = 4.0
#: a unit's price is its noise gain's quantile at ``1 - UNIT_PRICE_LEVEL / G`` (the risk-inflation level, not
#: tuned; measured on benchmarks/compare_groups.py, doc/peers/compare_groups.md)
UNIT_PRICE_LEVEL = 1.0
#: the group search's one-output Newton candidate refits (logistic) stop at this decrement, not the logistic
#: loss's own 1e-6 (same group F1 for fewer Newton steps; doc/changelog.rst, ``UNIT_CANDIDATE_DECREMENT``)
UNIT_CANDIDATE_DECREMENT = 1e-3
#: a group candidate whose least-squares value from the normal equations (losses/_squared_units.py) is at most
#: this share of ``y``'s weighted variance is evaluated on the columns instead (that value's error is about
#: 1e-16 of the variance; a rounding margin, not tuned)
EXPLAINED_SHARE = 1e-6
#: an exchange whose removed features the kept ones reproduce to within this share of their centred weighted
#: variance (a duplicated or rescaled column) skips the classifiers' add_gate: removing them loses nothing, and
#: the gate had kept both copies of a duplicated feature (a rounding margin, not tuned; doc/changelog.rst)
DUPLICATE_RESIDUAL = 1e-9

#: a cold one-output group fit whose group search runs (hard thresholding, debias) skips the solver: one
#: search from the ``k`` groups of largest gain at zero (abess's start) instead of one from the solver's
#: support and one from there (the same group F1, paired on fresh data sets at n = 200, 500 and 2000, for
#: about 0.55 of the CPU time at n = 200; doc/changelog.rst, ``GROUP_SEARCH_FROM_ZERO``)
GROUP_SEARCH_FROM_ZERO = True
#: a cold one-output least-squares fit of IHTRegressor without groups (hard thresholding, debias, splicing)
#: with at least this many observations per k log(p - k) skips the solver: the splicing searches run from
#: abess's start alone (no support changed of 480 fresh data sets at 22 and 29, F1 lower by 0.001 to 0.01 at
#: 1.45 to 16; doc/changelog.rst, ``SEARCH_FROM_ZERO_MIN_SAMPLES``)
SEARCH_FROM_ZERO_MIN_SAMPLES = 20.0

# -- the estimators' fits: support jump, splicing options, k=None, SparsityCV ----------------------------------
# (linear_model/, survival/, model_selection/; an estimator class names the constant it uses in a class
# attribute, e.g. ``_support_refit_patience = "CLASSIFIER_SUPPORT_REFIT_PATIENCE"``, read at use time)

#: with debias=True, the solvers that can (``support_refit``) jump to the minimiser on the support once it has
#: been unchanged for this many iterations: the regressors' and the default (least squares, 3 against 1 at
#: n=100, p=1000, 240 fits on fresh seeds: mean F1 0.519 against 0.510, paired 0.009 +- 0.004, for about 0.4 ms
#: of a 2.5 ms fit; Poisson and Gamma at 1: doc/changelog.rst, "Not adopted ... a support-jump patience of 1";
#: SQUARED_SUPPORT_REFIT_PATIENCE below for least squares with many observations)
SUPPORT_REFIT_PATIENCE = 3
#: ... the classifiers' (mean support F1 at 1, 2 and 3 on compare_peers.py's designs, 4 repeats: n=100,
#: p=1000 0.238, 0.199, 0.191; n=500 0.664, 0.649, 0.643)
CLASSIFIER_SUPPORT_REFIT_PATIENCE = 1
#: ... I-OBS's: the next iteration checks that the refit is a fixed point, else continues from it
#: (doc/changelog.rst, "I-OBS estimators ... stop once the Newton point has kept the same support")
IOBS_SUPPORT_REFIT_PATIENCE = 1
#: ... the regressors' with groups, whose group search starts from that support anyway (group F1 and time at
#: 3 and 2; 1 lost 0.012 to 0.020 on three settings: doc/changelog.rst, "Group fits take less CPU time")
GROUP_SUPPORT_REFIT_PATIENCE = 2
#: splicing='auto' splices when there are more than this many observations per k log(p - k): the regressors
#: (whose default is splicing=True) always
SPLICE_AUTO_FACTOR = 0.0
#: ... the classifiers above 2, about Wainwright's threshold for recovering the support at all: at n=100,
#: p=1000 splicing lowered their F1 (0.202 -> 0.171) at 7 times the time (doc/changelog.rst, "Classifiers splice
#: by default")
CLASSIFIER_SPLICE_AUTO_FACTOR = 2.0
#: the classifiers' splicing gates (splice's gate, add_gate, add_gate_uncorrelated): any exchange that lowers
#: the deviance, if every feature it adds is significant at the risk-inflation level, or at half that level
#: when the kept features do not explain the removed ones. On compare_peers.py's logistic designs (n=500, p=100
#: and 1000) add_gate 1 raised the mean support F1 (0.913 -> 0.918, 0.683 -> 0.700) and cut the settings more
#: than 0.01 below abess from 9 to 3 of 24 at both sizes (doc/changelog.rst, "Classifiers splice by default");
#: add_gate_uncorrelated 0.5 at n=2000, p=10000, SNR 1 moved F1 minus abess's from -0.025 to +0.012 and from
#: -0.034 to +0.009; halving both was not kept (doc/changelog.rst, "Classifiers: a lower significance level")
CLASSIFIER_GATE = 0.0
CLASSIFIER_ADD_GATE = 1.0
CLASSIFIER_ADD_GATE_UNCORRELATED = 0.5
#: the regressors' second splicing search (abess's rules) replaces the first's result when its loss is lower by
#: more than SWITCH_GATE (splice's switch_gate) with more than SWITCH_GATE_MIN_SAMPLES observations per
#: k log(p - k), by more than the exchange gate (0.25) below. On fresh data sets (benchmarks/switch_gate.py,
#: doc/peers/switch_gate.md) 0.1 took at n=500, p=1000 (7.2 per k log(p - k)) the settings more than 0.01 below
#: the best peer from 3 to 0 of 24, at n=2000, p=10000 (10.9) from 1 to 0; at n=100, p=1000 (1.45) it lowered the
#: mean F1 from 0.5083 to 0.4964: the limit lies between 1.45 and 7.2 (doc/changelog.rst, "The regressors'
#: splicing keeps the result of its second search")
SWITCH_GATE = 0.1
SWITCH_GATE_MIN_SAMPLES = 3.0
#: the Cox models' splicing tries the least useful selected feature against each of this many most useful
#: others (splice's swap_candidates; the other regressors 1, abess's rule: more was measured and not adopted,
#: doc/changelog.rst, "swap candidates"): with one the search stopped where an exchange its gate accepts was one
#: step away (doc/changelog.rst, "Cox models: the splicing search tries")
COX_SWAP_CANDIDATES = 5
#: the regressors' splicing (least squares): when a round accepts nothing, the best exact single exchange of any
#: selected feature for one of this many unselected features of largest marginal gain (splice's pair_candidates,
#: solvers/_splice_pairs.py; the added feature significant at the risk-inflation level, splice's pair_add_gate 1).
#: large_k.py's design at k=500 (n=5000, p=10000), first data set, without that test: 20 took 1 exchange and F1
#: 0.938 -> 0.940, 100 took 14 and 0.966, 400 the same support as 100 for 1.2 times the time (doc/changelog.rst,
#: "exact single exchanges")
PAIR_SWAP_CANDIDATES = 100
#: ... and only at k of at least this many (LARGE_K): on the regression peer grid (k <= 20) they moved F1 within
#: noise and took small fits from 0.83 to 0.90 of abess's time; large_k.py's gain is at k=500 (doc/changelog.rst,
#: "exact single exchanges")
LARGE_K = 50
#: there, the searches' rounds (splice's max_rounds, 20 below): large_k.py's design at k=500, 10 data sets, F1
#: +0.0056 +- 0.0025 for about 1.1 times the time, k=100 and 1000 unchanged (doc/changelog.rst, "more rounds")
LARGE_K_MAX_ROUNDS = 60
#: those exchanges read the candidates' columns this many at a time (a memory bound, not tuned: tests/test_estimators.py
#: holds a fit's peak below a quarter of X at n=1500, p=1000)
PAIR_SWAP_BLOCK = 16
#: with groups, the splicing search exchanges at most this many groups at once (splice's max_exchange, default
#: 5): logistic on compare_groups.py's designs (n=200, p=500 and n=500, p=1000, 20 data sets per setting) mean
#: group F1 0.4942 against 0.4929 at 5 for 0.60 to 0.66 times the CPU time (doc/peers/compare_groups.md); least
#: squares +0.005, 0.000 and -0.001 for 0.88 to 0.91 times it (doc/changelog.rst, "Regressors with ``groups``
#: exchange up to 2 groups")
GROUP_MAX_EXCHANGE = 2
#: k=None: the path goes on this many levels past the criterion's best value (a bound, not tuned; the path's
#: length and cost: doc/auto_k.md)
K_PATIENCE = 10
#: ... then takes the smallest level whose criterion is within this of the best value: a larger model needs
#: "positive" evidence (a criterion lower by about 2 to 6, Raftery 1995); 4 is the smallest margin tried that
#: matches abess's exact recovery on every easy design (benchmarks/auto_k_margin.py; doc/changelog.rst,
#: "``k=None`` takes the smallest level whose criterion (EBIC) is within 4")
K_MARGIN = 4.0
#: SparsityCV refits this many levels per round with the full splicing search (the best by mean score, and
#: those between them; doc/changelog.rst, "``SparsityCV`` runs a cheaper path": 0.25 to 0.27 of GridSearchCV's
#: time, the same k on 8 runs)
CV_FULL_SEARCH_LEVELS = 3

# -- least squares: precompute='auto' and the design --------------------------------------------------------

#: the least-squares regressors without groups (plain or Gram path) jump to the minimiser on their support once
#: it has been unchanged for this many iterations (else SUPPORT_REFIT_PATIENCE) with more than
#: SQUARED_PATIENCE_MIN_SAMPLES observations per k log(p - k): there (14.5 to 22) 0 to 1 % of the fits changed,
#: with the same F1 and test error, for 0.77 to 0.88 of the time; at 7.2, 3.4 and 1.45 the test error rose by
#: 0.05 %, 0.15 % and 1.3 % (doc/changelog.rst, ``SQUARED_SUPPORT_REFIT_PATIENCE``)
SQUARED_SUPPORT_REFIT_PATIENCE = 1
SQUARED_PATIENCE_MIN_SAMPLES = 10.0

#: precompute='auto' uses the Gram matrix for dense X with at least GRAM_AUTO_RATIO samples per feature and
#: at most GRAM_AUTO_MAX_FEATURES features (doc/peers/gram_precompute.md; doc/changelog.rst, ``precompute``)
GRAM_AUTO_RATIO = 10
GRAM_AUTO_MAX_FEATURES = 150
#: from GRAM_MODEL_MIN_SAMPLES samples, also above GRAM_AUTO_MAX_FEATURES when forming the Gram matrix
#: (GRAM_PRODUCTS_PER_FEATURE * p products with X) costs less than a fit through X (X_FIT_PRODUCTS products):
#: medians of benchmarks/gram_precompute.py --calibrate (doc/changelog.rst, "precompute='auto' for tall designs")
GRAM_MODEL_MIN_SAMPLES = 50000
GRAM_PRODUCTS_PER_FEATURE = 0.05
X_FIT_PRODUCTS = 21
#: data whose largest magnitude lies outside this range are solved rescaled by a power of two
#: (linear_model/_scaling.py; doc/changelog.rst, ``_SCALE_RANGE``)
SCALE_RANGE = (2.0 ** -20, 2.0 ** 20)
#: the classifiers' and Cox models' l2 strength on data rescaled by x_scale is alpha x_scale^2 (the user's alpha on
#: the user's coefficients), at most this (or alpha): far past the loss's curvature, and finite in the solvers' sums
#: (linear_model/_scaling.py; doc/changelog.rst, ``RESCALED_ALPHA_MAX``)
RESCALED_ALPHA_MAX = 2.0 ** 900
#: a centred second moment formed from uncentred moments is recomputed from centred columns when they differ
#: by more than this ratio (fewer than 10 digits left; doc/changelog.rst, ``_CANCELLATION_RATIO``)
CANCELLATION_RATIO = 1e6
#: the column extremes of a dense X of at most EXTREME_ROW_WIDTH / 8 columns (and at least 8 r rows) are reduced
#: over a view of r = EXTREME_ROW_WIDTH // p rows at a time (about this many entries per row of the view): numpy's
#: reduction over the rows of a narrow array loops over rows of p entries (n = 500, p = 100: 49 against 15 us;
#: doc/changelog.rst, "Small least-squares fits, einsum and the column extremes")
EXTREME_ROW_WIDTH = 2048

# -- GLM losses and their Newton refits ---------------------------------------------------------------------

#: the multinomial refit's conjugate gradients per Newton step use at most this share of a Hessian's cost in
#: Hessian-vector products before the preconditioner is formed anew (doc/changelog.rst, ``_CG_SHARE``)
SOFTMAX_CG_SHARE = 0.5
#: the multinomial refit's inexact Newton forcing term ``|g| / |g_0|`` is clipped to this range
#: (the lower end: steps of ``1e-12`` of ``theta`` need no more digits)
SOFTMAX_CG_RTOL = (1e-6, 0.1)
#: the rounding error of the multinomial refit's gradient, in units of rounding of ``|A^T (sw Y)|``
#: (doc/changelog.rst, ``_GRADIENT_ROUNDING = 10``: 0.3 to 1.5 units measured at the minimum)
GRADIENT_ROUNDING = 10
#: the splicing search's second result replaces the first only if its loss is lower by more than this many
#: units of rounding of the loss (``eps |f|``) as well as by the gate: below, the two are a tie (an l2 term far
#: above the data's curvature, or gate 0); doc/changelog.rst, ``SWITCH_ROUNDING``
SWITCH_ROUNDING = 64
#: a multinomial refit's coefficient row whose softmax-shift curvature ``alpha`` is at most this share of the
#: row's curvature is held at its shift (no step along it) when the Cholesky pivot test fails: 100 times above
#: that test's 1e-10 (doc/changelog.rst, ``FLAT_SHIFT_RTOL``)
FLAT_SHIFT_RTOL = 1e-8
#: up to this many classes the multinomial block Hessian is formed one pair of classes at a time
#: (doc/changelog.rst, the block Hessian "up to 5 classes (``_PAIR_CLASSES``)")
PAIR_CLASSES = 5
#: Huber's residual scale is reweighted over the residuals within this many scales of their median
#: (losses/_robust.py, inlier_scale; a conventional cut, not tuned)
INLIER_CUT = 2.5
#: k=None with the Huber loss judges its path again at the chosen level's residual scale until the level stays,
#: at most this many times (a bound: on compare_glm.py's huber designs, 240 fits, 4 rounds at most were needed;
#: the support F1 there: doc/changelog.rst, "Huber's k=None")
K_REJUDGE_ROUNDS = 5
#: the Gaussian fit term of the information criteria floors each target's residual sum of squares at this share
#: of the null model's: a fit closer than that is exact to rounding (float32 X, or residuals from the Gram
#: matrix, round at about 1e-14 of it), and unfloored the criterion chose among exact models by their rounding
#: (doc/changelog.rst, "k=None on noiseless data"); the Gamma loss's criterion floors its mean deviance at the
#: same share of the null model's (losses/_glm.py; doc/changelog.rst, "k=None on noiseless Gamma data"), and
#: Huber's criterion its scale at the root of it times y's (losses/_robust.py, criterion_scale_floor)
CRITERION_RSS_FLOOR = 1e-12
#: a Poisson fit's zero count whose fitted mean is below this share of y's weighted mean is numerically 0: where
#: the positive counts leave the coefficients undetermined, the zero counts are separated and the fit warns
#: (losses/_glm.py, PoissonLoss.separated_features; separated rows end their refits at about 1e-13 of it,
#: doc/changelog.rst, "Poisson fits with separated zero counts")
POISSON_VANISHING_MEAN = 1e-8
#: the Cox loss's curvature computations form dense blocks of n x this many columns (a memory bound)
COX_BLOCK = 256
#: the Cox models keep the baseline of their predictions at the largest training risk score instead of 0 when
#: some |X coef_| exceeds this (exp overflows near 709; a range bound with room for sums of n terms, not tuned):
#: below it the baseline is computed as before, bit for bit (survival/_cox.py, _store)
COX_BASELINE_SHIFT_ABOVE = 300.0
#: the monotone-likelihood check's certificate that none exists takes its vectors from this many events, then
#: from that many (spread over the event times; survival/_monotone.py): with 16 the check costs 0.5 to 7 ms,
#: 2 to 8 % of a k = 5 fit; at n = 500, k = 14 (whas500) 4 or 8 events left the certificate short and the linear
#: programme took 21 to 25 ms, 16 took 2 ms and 64 alone 7 ms (doc/changelog.rst, "monotone partial likelihood")
COX_MONOTONE_CERTIFICATE_EVENTS = (16, 64)

# -- I-OBS: hessian routes and Newton safeguards (solvers/_iobs.py, _iobs_curvature.py) ----------------------

#: largest side of a dense matrix factored for least squares (p x p Cholesky, n x n Woodbury): 128 MiB
DENSE_MAX_LS = 4096
#: entries of the ``k x k`` blocks (one per output) gathered at once by I-OBS's per-output correction and the
#: pruning refits: 32 MiB. At DENSE_MAX_LS ** 2 (128 MiB) they were the peak of prune_layer(method='iobs'); each
#: block is solved on its own, so the chunks change no result (doc/changelog.rst, "layer pruning's memory")
PER_OUTPUT_BLOCK_ENTRIES = 2 ** 22
#: largest ``(p + 1) * m`` for which a logistic / multinomial Hessian is formed densely at every iteration
DENSE_MAX_GLM = 1024
#: largest ``n * m`` for which a logistic / multinomial Hessian is inverted by Woodbury
WOODBURY_MAX_GLM = 2048
#: relative residual at which I-OBS's conjugate gradient stops, and its most iterations per solve
IOBS_CG_RTOL = 1e-10
IOBS_CG_MAX_ITER = 1000
#: halvings of the Newton step tried before a safeguard step
MAX_HALVINGS = 30
#: from this side a matrix built for one factorisation is factored in place when exactly symmetric
#: (below, LAPACK's copy costs little)
IN_PLACE_MIN = 128
#: rows of the Woodbury kernel formed at once (doc/changelog.rst, ``KERNEL_STRIP = 64``)
KERNEL_STRIP = 64
#: the 'screened' route's exact block: the current support and SCREEN_FACTOR * k other rows (see
#: _GLMCurvature._screened_newton; chosen by paired F1, doc/changelog.rst, "Changed results", hessian='screened')
SCREEN_FACTOR = 4

#: I-OBS's 'fisher' route from zero takes its first step, and checks that step's support jump, with the
#: screened block of the expected Hessian ('screened_fisher'), forming the n x n kernel only when that support
#: is no fixed point (paired F1 and timing: doc/changelog.rst, "I-OBS Gamma on wide data")
IOBS_FISHER_SCREENED_START = True
#: ... with at least this many samples of positive weight: below, the kernel is cheap and the screened start
#: lost held-out deviance on inverse-link data at n = 150, p = 400 (not at n = 500, p = 1000; same entry)
IOBS_FISHER_SCREENED_MIN_SAMPLES = 256
#: I-OBS's Poisson and Gamma fits from zero jump to the refit on the first iteration's support at once (then
#: check it is a fixed point) instead of after a second iteration keeping it (paired F1, doc/changelog.rst,
#: "I-OBS Poisson and Gamma: the support jump after the first iteration")
IOBS_GLM_REFIT_FIRST = True
#: most entries of X for which I-OBS's dense Hessian of a Poisson / Gamma fit is formed from a centred float64
#: copy of X kept for the fit (8 MiB) instead of weighted_gram's blocks (doc/changelog.rst, same entry)
IOBS_CENTRED_COPY_MAX = 2**20

# -- dask arrays ----------------------------------------------------------------------------------------------

#: rows of a block processed at a time by the dask kernels (1.6 MB at 100 columns, within the cache;
#: doc/changelog.rst, ``TILE_ROWS = 2048``, gives the tile sizes measured)
TILE_ROWS = 2048
#: the small results of this many blocks summed by one task of the reduction tree
FAN_IN = 8
#: least squares on a dask X goes through its Gram matrix up to this many features with precompute='auto'
#: (the blocks' p x p partial sums travel: 134 MB at 4096; doc/changelog.rst, ``DASK_GRAM_MAX_FEATURES``)
DASK_GRAM_MAX_FEATURES = 4096
#: the dask GLM search runs its folds in lockstep (False: one after the other; benchmarks/bench_dask_cv.py,
#: doc/changelog.rst, ``_dask_cv_glm._LOCKSTEP``)
LOCKSTEP = True

# -- low rank: regularized local search and matrix completion (impute/) -------------------------------------

#: eigenvalues of the local search's weight corrections below this are dropped when recompressed
EIG_FLOOR = 1e-12
#: completion objective values above this many times the starting one mean divergence
BLOWUP = 1e8
#: BLAS threads of a completion (tall and thin products; doc/changelog.rst, "completion threads")
BLAS_THREADS = 1
#: LowRankImputer's extrapolation weight with solver='accelerated' (Khanna & Kyrillidis' tau = 1/4)
IMPUTER_MOMENTUM = 0.25
#: observed entries are evaluated in chunks of this many (bounds the O(chunk * r) temporaries)
ENTRY_CHUNK = 1 << 16
#: ... and their gathered factor rows in buffers of at most this many floats (doc/changelog.rst, "Gathers")
ENTRY_GATHER = 1 << 15
#: above this share of observed entries, entries on the pattern come from dense row blocks of the product
#: (doc/changelog.rst, ``_factored._DENSE_SHARE``)
DENSE_SHARE = 0.05
#: extra columns of the randomized range finder beyond the r + 1 singular vectors needed
OVERSAMPLE = 10
#: below this many observed entries per free parameter a hard rank's ConvergenceWarning says the fit may have
#: no bounded minimiser (doc/changelog.rst, "fixed-rank convergence")
FEW_ENTRIES_PER_PARAMETER = 6.0
#: a dense X is read in blocks of rows of about this many entries (1 MB of float64), also the posterior's
ROW_BLOCK_ENTRIES = 1 << 17
#: restrict a completion to the observed rows and columns when they are at most this share of m + n
RESTRICT_SHARE = 0.5
#: standardize=True: a column's scale is at least this share of the median column standard deviation
#: (doc/changelog.rst, ``_SCALE_FLOOR``)
SCALE_FLOOR = 0.1
#: the posterior's noise variance is at least this share of the largest prior variance (a definite ridge)
NOISE_FLOOR = 1e-12
#: a column's own noise variance in the posterior: its residual sum of squares plus this many pseudo-entries at the
#: mean noise variance, over its residual degrees of freedom plus as many (on load_linnerud's 3 columns, none cost
#: 0.13 of a pipeline's R², 10 cost 0.03, 30 nothing), and at least this share of the mean one (a column its fit
#: interpolates has no residual, not no noise); doc/changelog.rst, "each column's noise"
COLUMN_NOISE_PRIOR = 30.0
COLUMN_NOISE_FLOOR = 0.1
#: ALS: growth of the extrapolation weight while extrapolations are accepted, its shrinkage on a refusal
#: (doc/changelog.rst has the tuning)
EXTRAPOLATION_GROWTH = 1.5
#: ALS takes the dense route from this share of observed entries, for matrices of at most this many entries
#: (32 MB at the cap; doc/changelog.rst, "dense ALS sweeps")
DENSE_SWEEP_SHARE = 0.4
DENSE_SWEEP_MAX_ENTRIES = 1 << 20
#: LowRankImputer's final ALS fit ends with exact least-squares sweeps (impute/_als.py, _exact_sweeps):
#: eigenvalues of a column's (row's) Jacobi-scaled Gram matrix at most this share of its largest are dropped
#: (directions its observed entries do not determine: the step leaves them where they are); a Gram matrix whose
#: squared Cholesky pivots all exceed it is solved directly
ALS_FINISH_SINGULAR = 1e-10
#: ... and at most this many of those sweeps (a column step, a row step) in the rank search's validation fits
#: (a cost bound; the final fit's sweeps stop only at max_iter, which its ConvergenceWarning tells to raise)
ALS_FINISH_SWEEPS = 100
#: their Gram matrices are formed in blocks of at most this many floats (8 MB)
EXACT_SWEEP_BLOCK = 1 << 20
#: below this share of observed entries they are a sparse product (doc/changelog.rst, "Sparse Gram matrices")
EXACT_SWEEP_SPARSE_SHARE = 0.2
#: a given rank without a ridge: the exact sweeps' ridge is this many noise variances over the data's spread
#: (impute/_als.py, noise_ridge; doc/changelog.rst, "a given rank the table does not determine")
ALS_NOISE_RIDGE = 1.0
#: a given rank's sweeps (finish='noise') are accelerated by Anderson's mixing of this many previous sweeps
#: (impute/_als.py, _exact_sweeps; doc/changelog.rst, "Anderson"), its least squares with this relative jitter
EXACT_SWEEP_ANDERSON = 5
EXACT_SWEEP_ANDERSON_JITTER = 1e-12

# -- low rank: rank='auto' (impute/_imputer_rank.py, impute/_rank_choice.py) --------------------------------

#: share of the observed entries held out, refinement points, rises before the doubling stops
AUTO_HOLDOUT = 0.1
AUTO_REFINE = 6
AUTO_PATIENCE = 2
#: below this many observed entries, the held-out error is pooled over AUTO_FOLDS disjoint folds instead of one
#: split (a handful of held-out entries decides nothing); doc/changelog.rst, "held-out folds on small tables"
AUTO_FOLDS_BELOW = 1000
AUTO_FOLDS = 10
#: every rank up to this one is tried, then a geometric grid
AUTO_DENSE = 10
#: a rank r is validated only if its free parameters r (m + n - r), the column offsets counted, are at most this
#: share of the entries fit on: all of them, for a hard rank (the hold-out refuses a rank that over-fits; with half,
#: 10 x 500 tables of rank 4 could not be validated: doc/changelog.rst, "wide tables with a hard rank") as for
#: solver='als' (with half, the default's error on exact tall low-rank tables was up to 0.98 of the column means';
#: doc/changelog.rst, "free parameters ``r (m + n - r)``")
AUTO_PARAMETER_SHARE = 1.0
ALS_PARAMETER_SHARE = 1.0
#: the validation fits stop at this relative change at the latest (they only need to rank the ranks)
AUTO_TOL = 1e-3
#: solver='als': the largest rank validated first, the ridges (multiples of the largest singular value of the
#: zero-filled centred observations, from 0.5 down by halves), the ratio between successive smaller ranks
#: (and steps of 1 up to ALS_RANK_STEP_BELOW); doc/changelog.rst has the tuning
ALS_TOP_RANK = 64
ALS_ALPHAS = tuple(0.5 * 0.5 ** k for k in range(12))
ALS_RANK_RATIO = 1.5
ALS_RANK_STEP_BELOW = 10
#: a ridge path stops after ALS_PATIENCE fits in a row that do not lower the held-out error by a share ALS_GAIN
ALS_PATIENCE = 1
ALS_GAIN = 1e-3
#: the smaller rank caps start at the number of singular values of the best fit above this share of the
#: largest, and stop after ALS_RANK_PATIENCE caps without a gain (doc/changelog.rst, ``_ALS_RANK_PATIENCE``); a cap
#: within a share ALS_GAIN of the best error replaces it (a tie goes to the smaller cap)
ALS_RANK_CUTOFF = 1e-2
ALS_RANK_PATIENCE = 1
#: then the smallest cap within one standard error of the best fit: at most this many caps tried, from the
#: eigenvalue-ratio estimate of the best fit's spectrum down (or up)
ALS_SMALL_RANK_TRIES = 3
#: then the ridge of the best fit times these factors, at its rank and from its factors
ALS_REFINE = (2 ** 0.5, 2 ** -0.5)
#: a warm-started fit that cannot change the choice stops once its held-out error has stayed above the error it
#: must beat, and risen, over this many sweeps in a row (doc/changelog.rst, "hopeless ALS fits")
ALS_HOPELESS_SWEEPS = 3

# -- layer pruning (pruning/_layer.py) -------------------------------------------------------------------------

#: a layer's Hessian (or a row's block H_QQ) whose smallest squared Cholesky pivot is at most this share of its
#: largest diagonal entry is singular to working precision: SparseGPT's sweep refuses it, a row's refit takes
#: the minimum-norm least-squares solution (doc/changelog.rst, "Layer pruning on linearly dependent inputs")
PRUNING_SINGULAR = 1e-12

# -- command line (sparse_estimators/_cli/) -----------------------------------------------------------------

#: --task auto: an integer target with at most this many distinct values (and fewer than half the rows) is
#: taken as class labels; more distinct integers are more likely counts or scores
MAX_AUTO_CLASSES = 5
#: up to this many distinct integers (the rule of earlier versions) the output says how to ask for classes
MAX_NOTED_CLASSES = 20
#: largest n_rows * n_columns * max|value|^2 accepted (the fit's sums of squares overflow not far above)
SQUARE_SUM_LIMIT = 1e300
#: rows of the criterion table shown on each side of the chosen k
PATH_CONTEXT = 3
