"""Parameter and attribute descriptions shared by the estimators' docstrings."""

import inspect

_SHARED = {
    "k": """k : int or None, default=None
        Number of features the model uses. ``None`` chooses it: hard
        thresholding IHT fits a warm-started path ``k = 1, 2, ...`` (each
        level refitted on its support, no splicing search), the extended BIC
        of Chen & Chen (2008, https://doi.org/10.1093/biomet/asn034),
        ``n log(RSS / n) + df log(n) + 2 log(binomial(n_features, k))`` for
        least squares (the deviance in place of ``n log(RSS / n)`` for
        classifiers), picks the level (the smallest whose criterion is
        within 4 of the path's minimum: a larger model must be clearly
        better), and the estimator's own algorithm
        then fits at that level (``k_``, with the criterion along the path in
        ``k_path_`` and ``criterion_path_``). The path stops 10 levels after
        the criterion's best value and never goes beyond
        ``n_samples / log(n_features)`` features (about the largest support
        that the data can tell from noise; with ``groups``, counted inside
        the selected groups: groups that cannot fit are never chosen, and a
        ValueError asks for ``k`` when none fits). On the designs of
        :source:`benchmarks/compare_peers.py` up to 500 x 1000 this recovers
        the true support better than abess's default path (mean support F1
        0.717 against 0.674 for least squares, 0.430 against 0.400 for
        logistic regression), and on easy designs (a few strong features
        among a few dozen) it is exact as often as abess's default; its cost
        is a few times that of one fit at the chosen ``k``
        (:doc:`/auto_k`). A ``k`` larger than the number of features is
        clipped to it with a warning, so grid searches never fail on it.""",
    "loss": """loss : {'squared_error', 'poisson', 'gamma', 'huber'}, default='squared_error'
        The loss fitted on the ``k`` features (one target for all but
        'squared_error'):

        * 'squared_error': least squares;
        * 'poisson': Poisson deviance with the log link, for counts
          (``y >= 0``, with a positive sum; see
          :class:`~sparse_estimators.losses.PoissonLoss`);
        * 'gamma': Gamma deviance with the log link, for positive skewed
          amounts (``y > 0``; :class:`~sparse_estimators.losses.GammaLoss`);
        * 'huber': Huber's loss with threshold ``epsilon`` times a scale of
          the residuals, for data with outliers
          (:class:`~sparse_estimators.losses.HuberLoss`): the scale starts at
          1.4826 times the median absolute deviation (MAD) of ``y``, is
          re-estimated once from the first fit's residuals (their MAD,
          reweighted to the standard deviation of those within 2.5 scales of
          their median: the inliers'), and the fit is repeated at it, so that
          multiplying ``y`` by ``c`` multiplies ``coef_`` by ``c``.

        For 'poisson' and 'gamma', :meth:`predict` returns the mean
        ``exp(X coef_ + intercept_)`` and :meth:`score` is D^2, the fraction
        of deviance explained (as :class:`~sklearn.linear_model.PoissonRegressor`
        and :class:`~sklearn.linear_model.GammaRegressor`); for
        'squared_error' :meth:`score` is R^2, for 'huber' the fraction of
        Huber's loss explained (see :meth:`score`). Targets outside a loss's domain raise a
        ValueError. The losses other than 'squared_error' have a free
        intercept (never thresholded), refit by Newton's method, and ignore
        ``precompute``; ``k=None`` compares levels with the Poisson or Gamma
        likelihood (Gamma's shape estimated; Poisson's is that of counts, so
        the level chosen for ``c y``, e.g. rates, can differ from that for
        ``y``: for rates choose ``k`` with
        :class:`~sparse_estimators.model_selection.SparsityCV`, whose D^2 is
        scale-free), and for 'huber' with the
        quasi-likelihood of Huber's least favourable distribution, the path
        fitted at the pilot scale and judged at the residual scale of the
        level it chooses (again until that level stays: at the pilot, which
        holds the signal too, features far above the noise were missed).
        Huber's loss has no likelihood:
        :class:`~sparse_estimators.model_selection.SparsityIC` refuses it,
        use :class:`~sparse_estimators.model_selection.SparsityCV`.""",
    "epsilon": """epsilon : float, default=1.35
        Huber's threshold in units of the residuals' scale, as
        :class:`~sklearn.linear_model.HuberRegressor`'s (1.35: 95 % efficiency
        on Gaussian noise); at least 1. Used only with ``loss='huber'``.""",
    "thresholding": """thresholding : {'hard', 'soft', 'reciprocal', 'lq'} or ThresholdingOperator, \
default='hard'
        The operator that enforces sparsity (see
        :mod:`sparse_estimators.thresholding`). Strings use the operators'
        defaults (``Reciprocal(c=0.0)``, ``Lq(q=2/3)``); pass an object for
        other parameters, which are then nested parameters of the estimator
        (``thresholding__c``, ``thresholding__q``: ``set_params`` and a grid
        search reach them). Operators other than hard shrink the kept entries
        and the solver returns its best iterate.""",
    "step_size": """step_size : 'auto' or float, default='auto'
        'auto': adaptive step, backtracking on the quadratic upper bound
        (Liu & Barber, eq. 6), starting at ``1/L``. A positive float is a
        fixed step of ``step_size / L``, with ``L`` the smoothness constant of
        the loss (largest eigenvalue of the weighted Gram matrix, by power
        iteration): the same value means the same thing on every dataset, and
        values above 2 typically diverge, which is detected and reported.""",
    "max_iter": """max_iter : int, default=1000
        Maximum number of iterations; reaching it raises a
        :class:`~sklearn.exceptions.ConvergenceWarning`.""",
    "tol": """tol : float, default=1e-4
        Stop when the support is unchanged and the relative change of the
        coefficients is at most ``tol``.""",
    "fit_intercept": """fit_intercept : bool, default=True
        Fit an intercept. It is never thresholded.""",
    "debias": """debias : bool, default=True
        Refit the loss on the selected support after the sparse solver (least
        squares in closed form; logistic by Newton's method). The support, and
        hence ``k``, is unchanged. With hard thresholding, IHT and accelerated
        IHT then jump to that refit as soon as their support has settled
        (unchanged for 1 iteration for classifiers and for least squares with
        more than 10 samples per ``k log(n_features - k)``, 2 for least
        squares with ``groups``, 3 for the other regressions) and
        stop there when it is a fixed point of the thresholded step, which is
        where the iteration converges while the support stays: fewer
        iterations, and ``n_iter_`` counts those up to the jump.
        ``debias=False`` runs the papers' iteration until ``tol``.""",
    "precompute": """precompute : bool or 'auto', default='auto'
        Work through the Gram matrix ``X^T X`` (weighted, centered; see
        :class:`~sparse_estimators.losses.GramSquaredLoss`): it is formed
        once, reading ``X`` in blocks of rows, and no product with ``X``
        follows, so that each iteration and each refit costs
        ``O(n_features k)`` instead of ``O(n_samples n_features)``. Worth it
        when ``n_samples`` is much larger than ``n_features`` and
        ``n_features`` is small (forming it costs as much as ``n_features / 15``
        to ``n_features / 4`` products with ``X``). ``'auto'`` precomputes for dense ``X`` with at
        least 10 samples per feature and at most 150 features
        (:source:`benchmarks/gram_precompute.py`: 0.4 to 0.8 times the time with
        ``n_samples >= 10000`` or ``n_features <= 50``, about the same time
        with a few thousand samples and 100 to 150 features), or, from 50000
        samples, when a cost model measured by that script says the Gram
        matrix costs fewer products with ``X`` than a fit through ``X`` (up to
        about 420 features). The fit
        is the same up to rounding (values are then precise to about
        ``1e-16`` times the variance of ``y``, not of the residuals: for
        noiseless data use ``False``). On a dask ``X`` (see the user guide's
        "Larger than memory"), ``'auto'`` takes the Gram path, one pass over
        ``X``, up to 4096 features, and above that reads ``X`` at every
        iteration (one pass per product with ``X``, as the GLM losses do,
        counted in ``n_passes_``); ``True`` forces the Gram path and
        ``False`` the passes per iteration.""",
    "positive": """positive : bool, default=False
        Constrain the coefficients to be non-negative (as
        ``LinearRegression(positive=True)``): the projection keeps the ``k``
        largest positive entries (negative ones are set to zero first), and
        every refit on a support (the debiasing, the support jump, the
        splicing search's candidates, the path's warm starts) is a
        non-negative least-squares fit (``scipy.optimize.nnls`` on the
        columns, slower than the unconstrained solve). A feature whose
        non-negative fit is zero leaves the support, so fewer than ``k``
        features can be selected; with ``groups``, a group whose whole
        non-negative fit is zero leaves it, and a selected group's features
        are all in ``support_``, some perhaps with a zero coefficient. With
        several targets every entry is constrained.""",
    "groups": """groups : array-like of shape (n_features,), callable or None, default=None
        One label per feature (feature groups, not the sample groups of a
        splitter such as ``GroupKFold``; or a callable returning them from the
        input's feature names at fit time): the features with the same label form a group
        that is selected or dropped as a whole, and ``k`` counts groups
        (thresholding on the groups' l2 norms over their features and all
        outputs or classes; see :class:`~sparse_estimators.structures.Groups`
        and, to group the columns a ``ColumnTransformer`` makes from each
        original variable, :func:`~sparse_estimators.structures.groups_from_feature_names`,
        with :class:`~sparse_estimators.compose.GroupsFromTransformer` for
        sparse one-hot output).
        ``support_`` lists the selected features and ``groups_support_`` the
        selected groups' labels. The splicing search then exchanges whole
        groups (see :func:`sparse_estimators.solvers.splice`'s
        ``structure``); with IHT and accelerated IHT, a one-output least-squares
        or binary logistic fit from zero (no ``coef_init`` or warm start)
        with hard thresholding and the splicing search runs the search
        alone, from the ``k`` groups of largest gain at zero (abess's
        start), without the solver (``n_iter_`` is then 0): the same group
        F1 in less time. Groups of one feature each (a distinct label per
        feature) are fitted as without groups, the same problem (only
        ``groups_support_`` is added). Labels are compared as given, all numbers or all
        strings: a mix (``[1, "1", 2]``) is refused, since numpy would read
        ``1`` as ``"1"``. None: every feature is its own unit.""",
    "always_select": """always_select : array-like of int, str or bool (or of group labels), or None, \
default=None
        Features that every fit keeps, as abess's ``always_select``: their
        indices; their names, resolved at ``fit`` against
        ``feature_names_in_`` (``X`` a DataFrame; an unknown name, or names
        with an ``X`` without feature names, is a ValueError); or a boolean
        mask of one entry per feature, as scikit-learn's ``ColumnTransformer``
        reads column specifications. With ``groups``, group labels, compared
        as given (a boolean mask is then refused, unless the group labels
        are booleans). They count towards ``k`` (more of
        them than ``k`` is an error), are kept unshrunk by the thresholding
        operator, never exchanged out by the splicing search, and are always
        in ``support_`` (with ``positive=True``, with a zero coefficient where
        the non-negative refit puts one). The automatic choice of ``k`` and
        the searches' grids start at their number.""",
    "warm_start": """warm_start : bool, default=False
        Start from the previous fit's coefficients when refitting (a fit
        with other classes or targets starts cold). With ``k=None`` the
        level is chosen again along a path that starts from zero
        coefficients, so the previous coefficients are not used. With
        ``debias=False`` and ``'lq'`` or ``'reciprocal'`` thresholding the
        limit of the iteration depends on the step (those operators do not
        shrink in proportion to it): with ``step_size='auto'``, whose
        adaptive step starts again from its initial value, a refit on the
        same data can move the coefficients by a few hundredths; with a
        float ``step_size`` the refit of a converged fit stops within
        ``tol`` of it.""",
    "verbose": """verbose : int, default=0
        1 prints a summary of the fit; 2 one line per iteration.""",
    "alpha": """alpha : float, default=1e-4
        Strength of the l2 penalty ``alpha/2 ||coef||^2`` added to the mean
        log-loss (the intercept is not penalised). A small positive value
        keeps the problem well posed on separable data.""",
    "class_weight": """class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, multiplied into ``sample_weight``; 'balanced'
        uses ``n_samples / (n_classes * np.bincount(y))``. Like integer
        sample weights, class weights above 1 count as repeated rows: when
        the weights (``sample_weight`` times the class weights) sum to more
        than ``n_samples``, the splicing search's thresholds (and
        ``splicing='auto'``) use that larger number of observations.""",
}

_ATTRIBUTES = """coef_ : ndarray of shape {coef_shape}
        Coefficients; exactly ``k`` features are non-zero (fewer only when
        the data support fewer, e.g. with soft thresholding or constant
        columns; none for a regressor's constant target with
        ``fit_intercept=True``, whose model is the intercept alone).
    intercept_ : {intercept_type}
        Intercept (0 when ``fit_intercept=False``).
    support_ : ndarray of shape (n_selected,)
        Sorted **indices** of the selected features, not the boolean mask
        that scikit-learn's selectors (``RFE``, ``SelectFromModel``) call
        ``support_``: :meth:`get_support` gives the mask (or, with
        ``indices=True``, these indices), with their semantics.
    groups_support_ : ndarray of shape (n_selected_groups,)
        Only with ``groups``: the sorted labels of the selected groups.
    n_iter_ : int
        Number of iterations of the sparse solver (0 for a fit that the
        splicing search makes alone: a group fit, see ``groups``, and
        :class:`~sparse_estimators.IHTRegressor`'s least-squares fits with
        many observations per feature, see its description; and for a
        regressor's null model of a constant target).
    n_exchanges_ : int
        Number of accepted exchanges of the splicing search (0 when
        ``splicing=False``).
    loss_curve_ : ndarray of shape (``n_iter_``,)
        Training objective (weighted mean loss) after each iteration.
    k_ : int
        The number of features the model uses: ``k``, clipped to the number
        of features, or the level chosen when ``k=None`` (for a regressor's
        constant target, the number of ``always_select`` features: 0
        without).
    k_path_ : ndarray of shape (n_levels,)
        Only when ``k=None``: the levels ``1, 2, ...`` of the path that
        chose ``k_`` (no path, and none of these three attributes, for a
        regressor's constant target: see ``k_``).
    criterion_path_ : ndarray of shape (n_levels,)
        Only when ``k=None``: the criterion at each level of ``k_path_``
        (lower is better; its minimum is at ``k_``).
    k_criterion_ : str
        Only when ``k=None``: the criterion's name (``'ebic'``).
    n_passes_ : int
        Only when ``X`` is a dask array: the passes over its chunks (one
        ``dask.compute`` each; 1 for least squares through the Gram matrix,
        see ``precompute`` and the user guide's "Larger than memory").
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names."""


_SPLICING = """splicing : bool or 'auto', default={default}
        After the sparse solver, improve the support by exchanging features
        (the splicing search of abess; see
        :func:`sparse_estimators.solvers.splice`): up to 5 selected features
        are swapped for unselected ones when the refitted loss drops by more
        than a noise-scaled threshold; the coefficients are refitted on the
        final support. Part of the debiasing stage: ignored when
        ``debias=False``. ``False`` keeps the solver's own support (the
        papers' algorithms as published).{note}"""

_SPLICING_REGRESSOR_NOTE = """ For regressors a second search
        runs abess's own rules from the ``k`` features of largest marginal
        gain (``screening_start='abess'`` of ``splice``), and its support
        replaces the first one when its loss is lower by more than the
        threshold, or, with more than ``3 k log(n_features - k)``
        observations, by more than 0.4 times it (``switch_gate=0.1`` of
        ``splice``; see the switch-gate measurements on the :doc:`benchmark page </benchmarks>`). ``'auto'`` is the
        same as ``True`` for regressors."""

_SPLICING_CLASSIFIER_NOTE = """ For classifiers an exchange
        is accepted when it lowers the training deviance and every feature
        it adds is itself significant: removing it from the new fit would
        raise the deviance by more than the best of ``n_features`` noise
        features typically lowers it (``add_gate=1`` of ``splice``). The
        deviance alone is a poor guide here: with correlated neighbouring
        features, supports holding a few noise features often have a lower
        training deviance than the true one. ``'auto'`` splices when the
        number of observations (``n_samples``, or the sum of integer
        ``sample_weight``, which count as repeated rows) exceeds
        ``2 k log(n_features - k)`` (about the sample size
        below which no method recovers the support, Wainwright 2009,
        https://doi.org/10.1109/TIT.2009.2016018): on the
        designs of :source:`benchmarks/compare_peers.py` splicing raised the mean
        support F1 at n = 500 and lowered it at n = 100, p = 1000, where it
        also made fits about 7 times slower. ``True`` always splices."""


def shared_params(*names):
    """The shared descriptions of ``names``, joined for a Parameters section."""
    return "\n\n    ".join(_SHARED[name] for name in names)


def fill_doc(**extra):
    """Class decorator: substitute ``{name}`` fields in the docstring.

    Fields: every shared parameter by name, ``solver_params`` (all shared
    parameters after ``k``, in signature order), ``classifier_params``
    (``alpha`` and ``class_weight``), and the keyword arguments.
    """

    def decorate(cls):
        fields = {name: text for name, text in _SHARED.items()}
        splicing = inspect.signature(cls.__init__).parameters.get("splicing")
        if splicing is not None:
            fields["splicing"] = _SPLICING.format(default=repr(splicing.default),
                                                  note=_SPLICING_REGRESSOR_NOTE if splicing.default is True
                                                  else _SPLICING_CLASSIFIER_NOTE)
        fields.update(extra)  # per-class descriptions replace the shared ones, also in the groups
        names = [name for name in ("loss", "epsilon", "thresholding", "step_size", "max_iter", "tol",
                                   "fit_intercept", "debias", "splicing", "precompute", "positive", "groups",
                                   "always_select", "warm_start", "verbose")
                 if name in inspect.signature(cls.__init__).parameters]
        fields["solver_params"] = "\n\n    ".join(fields[name] for name in names)
        fields["classifier_params"] = "\n\n    ".join(fields[name] for name in ("alpha", "class_weight"))
        cls.__doc__ = cls.__doc__.format(**fields)
        return cls

    return decorate


def attributes(coef_shape, intercept_type):
    """The shared Attributes section."""
    return _ATTRIBUTES.format(coef_shape=coef_shape, intercept_type=intercept_type)
