"""The public estimators' numpydoc docstrings against their code.

Every ``__init__`` parameter is documented, in signature order, with the
signature's default (``default=...`` in its type line, as scikit-learn
writes it); no documented parameter is missing from the signature; the
public methods document their arguments; and the attributes a fit sets are
the documented ones (each documented attribute set by some fit below:
``k=None``, feature ``groups``, a DataFrame). Scikit-learn's own check
(``sklearn.utils._testing.check_docstring_parameters``) only looks at
functions of the ``sklearn`` namespace, hence this module.
"""

import inspect
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

import sparse_estimators
from sparse_estimators import compose, impute, model_selection, plotting, survival

try:
    from numpydoc import docscrape
except ImportError:  # (scikit-learn ships numpydoc's parser: the test extra need not install numpydoc and Sphinx)
    docscrape = pytest.importorskip("sklearn.externals._numpydoc.docscrape")

_MODULES = [sparse_estimators, survival, model_selection, impute, compose, plotting]
_CLASSES = sorted({obj for module in _MODULES for obj in (getattr(module, name) for name in module.__all__)
                   if isinstance(obj, type)}, key=lambda cls: cls.__name__)
_ESTIMATORS = [cls for cls in _CLASSES if issubclass(cls, BaseEstimator)]
_METHODS = ("fit", "predict", "predict_proba", "predict_log_proba", "decision_function", "score", "transform",
            "fit_transform", "inverse_transform", "get_support", "predict_survival_function",
            "predict_cumulative_hazard_function", "from_estimator", "plot")
# Set only when X is a dask array (see the user guide's "Larger than memory", tested in test_dask.py).
_DASK_ONLY = {"n_passes_"}


def _class_doc(cls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (numpydoc warns on the sections it does not know)
        return docscrape.ClassDoc(cls)


def _names(section):
    """The documented names of a Parameters or Attributes section (``a, b : ...`` lists several)."""
    return [name.strip().lstrip("*") for entry in section for name in entry.name.split(",")]


def _signature(function):
    return {name: p for name, p in inspect.signature(function).parameters.items()
            if name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _documented_default(type_line):
    match = re.search(r"default\s*=\s*(.+?)\s*$", type_line)
    return None if match is None else match.group(1)


def _same_default(text, value):
    if isinstance(value, str):
        return text.strip("'\"") == value
    if isinstance(value, float) and np.isnan(value):
        return text in ("np.nan", "nan")
    try:
        return eval(text, {"np": np}) == value  # noqa: S307 - the docstrings' own literals (1e-4, None, True, 0.25)
    except Exception:  # noqa: BLE001 - a description such as "a StandardScaler": compared as text
        return text == repr(value)


@pytest.mark.parametrize("cls", _CLASSES, ids=lambda cls: cls.__name__)
def test_init_parameters_documented_with_their_defaults(cls):
    doc = _class_doc(cls)
    documented = {entry.name: entry.type for entry in doc["Parameters"]}
    signature = _signature(cls.__init__)
    if not documented and set(signature) <= set(_names(doc["Attributes"])):
        return  # a result record (``CompletionResult``): its fields are its documented attributes
    assert list(documented) == list(signature), f"{cls.__name__}: documented {list(documented)}"
    wrong = []
    for name, parameter in signature.items():
        if parameter.default is inspect.Parameter.empty:
            continue
        text = _documented_default(documented[name])
        if text is None or not _same_default(text, parameter.default):
            wrong.append(f"{name}: documented {documented[name]!r}, signature default {parameter.default!r}")
    assert not wrong, f"{cls.__name__}: " + "; ".join(wrong)


@pytest.mark.parametrize("cls", _ESTIMATORS, ids=lambda cls: cls.__name__)
def test_parameter_constraints_cover_the_parameters(cls):
    constraints = getattr(cls, "_parameter_constraints", None)
    if constraints is None:
        pytest.skip("validated by hand")
    missing = set(_signature(cls.__init__)) - set(constraints)
    assert not missing, f"{cls.__name__} validates no constraint for {sorted(missing)}"


@pytest.mark.parametrize("cls", _ESTIMATORS, ids=lambda cls: cls.__name__)
def test_documented_string_options_are_the_valid_ones(cls):
    # the quoted values of a type line ("{'hard', 'soft'} or ThresholdingOperator, default='hard'") against
    # the StrOptions that validate the parameter (scoring's are scikit-learn's scorer names, not listed)
    from sklearn.utils._param_validation import StrOptions

    documented = {entry.name: entry.type for entry in _class_doc(cls)["Parameters"]}
    wrong = []
    for name, constraints in getattr(cls, "_parameter_constraints", {}).items():
        options = [c for c in constraints if isinstance(c, StrOptions)]
        if name not in documented or name == "scoring" or not options:
            continue
        valid = set().union(*(c.options for c in options))
        quoted = set(re.findall(r"'([^']*)'", documented[name].split("default=")[0]))
        if quoted != valid:
            wrong.append(f"{name}: documented {sorted(quoted)}, valid {sorted(valid)}")
    assert not wrong, f"{cls.__name__}: " + "; ".join(wrong)


@pytest.mark.parametrize("cls", _CLASSES, ids=lambda cls: cls.__name__)
def test_public_methods_document_their_arguments(cls):
    wrong = []
    for name in _METHODS:
        method = inspect.getattr_static(cls, name, None)
        method = getattr(method, "__func__", method)  # (classmethods)
        if not inspect.isfunction(method) or not method.__module__.startswith("sparse_estimators"):
            continue
        documented = _names(docscrape.FunctionDoc(method)["Parameters"])
        signature = list(_signature(method))
        keywords = {p.name for p in inspect.signature(method).parameters.values() if p.kind == p.VAR_KEYWORD}
        if ([name for name in documented if name in signature] != signature
                or set(documented) - set(signature) - keywords):
            wrong.append(f"{name}: documented {documented}, signature {signature}")
    assert not wrong, f"{cls.__name__}: " + "; ".join(wrong)


def _fits(cls):
    """Fits of ``cls`` that together set every attribute it documents (but the dask-only ones)."""
    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.standard_normal((80, 8)), columns=[f"x{j}" for j in range(8)])
    y = X["x0"] - 2 * X["x3"] + 0.5 * rng.standard_normal(80)
    labels = (y > 0).astype(int) + (y > 1.5)
    groups = [j // 2 for j in range(8)]
    name = cls.__name__
    if "CoxPH" in name:
        time = np.exp(-y) * rng.exponential(size=80)
        target = np.array(list(zip(rng.rand(80) < 0.7, time, strict=True)), dtype=[("event", bool), ("time", float)])
        return [(cls(k=2), X, target), (cls(k=None), X.to_numpy(), target), (cls(k=1, groups=groups), X, target)]
    if name.startswith("ReducedRank"):
        target = labels if "Classifier" in name else np.c_[y, y + X["x1"]]
        return [(cls(), X, target)]
    if name in ("SparsityCV", "SparsityIC"):
        return [(cls(sparse_estimators.IHTRegressor()), X, y), (cls(sparse_estimators.IHTClassifier()), X, labels)]
    if name == "LowRankImputer":
        missing = X.mask(rng.rand(*X.shape) < 0.1)
        return [(cls(rank=2, add_indicator=True), missing, None), (cls(rank="auto"), missing, None)]
    if name == "GroupsFromTransformer":
        from sklearn.compose import ColumnTransformer
        from sklearn.preprocessing import OneHotEncoder

        table = X.assign(color=rng.choice(["a", "b", "c"], 80))
        transformer = ColumnTransformer([("onehot", OneHotEncoder(), ["color"])], remainder="passthrough")
        return [(cls(transformer, sparse_estimators.IHTRegressor(k=2)), table, y),
                (cls(transformer, sparse_estimators.IHTClassifier(k=2)), table, labels)]
    target = labels if "Classifier" in name else y
    return [(cls(k=2), X, target), (cls(k=None), X.to_numpy(), target), (cls(k=1, groups=groups), X, target)]




@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("cls", _ESTIMATORS, ids=lambda cls: cls.__name__)
def test_documented_attributes_are_the_fitted_ones(cls):
    documented = set(_names(_class_doc(cls)["Attributes"]))
    seen = set()
    for estimator, X, y in _fits(cls):
        estimator.fit(X, y)
        fitted = {name for name in vars(estimator) if name.endswith("_") and not name.startswith("_")}
        assert fitted <= documented, f"{cls.__name__} sets undocumented {sorted(fitted - documented)}"
        seen |= fitted
    assert documented - _DASK_ONLY <= seen, f"{cls.__name__} documents {sorted(documented - seen)}, never set"
