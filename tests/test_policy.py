"""Tuned policy lives in sparse_estimators/_policy.py only, and is read there at use time."""

import ast
import importlib
import inspect
import numbers
import pathlib
import pkgutil

import numpy as np
from sklearn.base import BaseEstimator

import sparse_estimators
from sparse_estimators import _policy
from sparse_estimators.solvers import splice

PACKAGE = pathlib.Path(sparse_estimators.__file__).parent
POLICY = {name for name in vars(_policy) if name.isupper()}

#: numeric module constants that are not tuned policy, and why (a new entry here needs a reason)
NOT_POLICY = {
    ("losses/_robust.py", "_MAD_TO_SD"): "a mathematical constant, 1 / Phi^{-1}(3/4)",
    ("_cli/__init__.py", "_STATUS_CLOSED_PIPE"): "the shell's convention, 128 + SIGPIPE",
    ("linear_model/_scaling.py", "_MOMENTS_RANGE"): "float64's range: squares of magnitudes in 2^+-500 stay normal",
}
#: the estimators' numeric class attributes that are not tuned policy, and why (a new entry here needs a reason)
NOT_POLICY_ATTRIBUTES = {"_warn_depth": "the stacklevel of the fits' warnings (the user's call to fit)"}
#: the options of the splicing search and the solvers' support jump: a number given to one of them is tuned policy
SEARCH_OPTIONS = {name for name, parameter in inspect.signature(splice).parameters.items()
                  if parameter.kind is parameter.KEYWORD_ONLY} | {"support_refit"}


def _module_constants():
    """``(module, name, value node)`` of every module-level assignment outside _policy.py."""
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == "_policy.py":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign):
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        yield module, name.id, value


def _numeric(node):
    """Whether ``node`` is a number or bool, an arithmetic of numbers, or a tuple of those."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, complex)
    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand)
    if isinstance(node, ast.BinOp):
        return _numeric(node.left) and _numeric(node.right)
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_numeric(e) for e in node.elts)
    return False


def test_policy_is_plain_numbers_and_switches():
    assert len(POLICY) > 60
    for name in POLICY:
        value = getattr(_policy, name)
        values = value if isinstance(value, tuple) else (value,)
        assert all(isinstance(v, int | float) and np.isfinite(v) for v in values), name


def test_no_module_defines_or_copies_a_policy_name():
    # a module-level copy (a definition, or ``from .._policy import NAME``) would not follow a monkeypatch of
    # _policy: the modules read ``_policy.NAME`` when they use it
    defined = [(module, name) for module, name, _ in _module_constants() if name.lstrip("_") in POLICY]
    assert defined == []
    copied = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "_policy":
                copied.append((path.relative_to(PACKAGE).as_posix(), [a.name for a in node.names]))
    assert copied == []


def test_numeric_module_constants_live_in_policy():
    # a new tuned number goes to _policy.py (with its comment and pointer to the figures), not to its module
    found = {(module, name) for module, name, value in _module_constants()
             if name.lstrip("_").isupper() and _numeric(value)}
    assert found == set(NOT_POLICY)


def test_a_monkeypatch_of_policy_reaches_the_using_module(monkeypatch):
    # the I-OBS route limits are read by solvers/_iobs.py when the route is chosen, not copied at import
    from sparse_estimators.losses import SquaredLoss
    from sparse_estimators.solvers._iobs import select_hessian_route

    X = np.random.RandomState(0).standard_normal((50, 20))
    loss = SquaredLoss(X, X[:, 0])
    assert select_hessian_route(loss) == "dense"
    monkeypatch.setattr(_policy, "DENSE_MAX_LS", 19)
    assert select_hessian_route(loss) == "cg"


def _estimator_classes():
    """The package's estimator classes and the package's classes they inherit from (mixins included)."""
    classes = set()
    for info in pkgutil.walk_packages(sparse_estimators.__path__, "sparse_estimators."):
        for value in vars(importlib.import_module(info.name)).values():
            if inspect.isclass(value) and issubclass(value, BaseEstimator):
                classes.update(c for c in value.__mro__ if c.__module__.startswith("sparse_estimators."))
    return classes


def _holds_number(value):
    """Whether ``value`` is a number (not a bool: a structural switch) or a container holding one."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, numbers.Number):
        return True
    if isinstance(value, dict):
        return any(_holds_number(v) for v in value.values())
    if isinstance(value, tuple | list | set | frozenset):
        return any(_holds_number(v) for v in value)
    return False


def test_estimator_classes_hold_no_tuned_numbers():
    # an estimator's patience, gates or margins are read from _policy at use time; a class attribute names the
    # constant it uses (``_support_refit_patience = "CLASSIFIER_SUPPORT_REFIT_PATIENCE"``), never holds a number
    classes = _estimator_classes()
    assert len(classes) > 20
    found = {(c.__module__, c.__name__, name) for c in classes for name, value in vars(c).items()
             if name.startswith("_") and not name.startswith("__") and name not in NOT_POLICY_ATTRIBUTES
             and _holds_number(value)}
    assert found == set()
    named = {(c.__name__, name, value) for c in classes for name, value in vars(c).items()
             if isinstance(value, str) and value.isidentifier() and value.isupper()}
    assert len(named) >= 6 and all(value in POLICY for _, _, value in named), named


def test_search_options_take_no_literal_numbers():
    # ``{"switch_gate": 0.1}`` or ``splice(..., gate=0.25)`` in a module: the number goes to _policy (a solver's
    # default in its signature is an API parameter, documented in its docstring, and is not matched here)
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == "_policy.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                pairs = [(key.value, value) for key, value in zip(node.keys, node.values, strict=True)
                         if isinstance(key, ast.Constant)]
            elif isinstance(node, ast.Call):
                pairs = [(keyword.arg, keyword.value) for keyword in node.keywords]
            elif isinstance(node, ast.Assign):  # options["gate"] = 0.25
                pairs = [(target.slice.value, node.value) for target in node.targets
                         if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)]
            else:
                continue
            found += [(module, node.lineno, key) for key, value in pairs
                      if key in SEARCH_OPTIONS and _numeric(value)
                      and not (isinstance(value, ast.Constant) and isinstance(value.value, bool))]
    assert found == []


def test_a_monkeypatch_of_policy_reaches_the_estimators(monkeypatch):
    # the estimators' constants are read when a fit uses them: the classifiers' patience and gates, the regressors'
    # switch gate and the Cox models' swap candidates, not copied into the classes
    from sparse_estimators import IHTClassifier, IHTRegressor
    from sparse_estimators.losses import LogisticLoss, SquaredLoss
    from sparse_estimators.structures import Rows
    from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis
    from sparse_estimators.thresholding import Hard

    X = np.random.RandomState(0).standard_normal((400, 20))
    squared, logistic, rows = SquaredLoss(X, X[:, 0]), LogisticLoss(X, (X[:, 0] > 0) * 1.0), Rows(Hard())
    monkeypatch.setattr(_policy, "CLASSIFIER_SUPPORT_REFIT_PATIENCE", 7)
    monkeypatch.setattr(_policy, "CLASSIFIER_ADD_GATE", 0.75)
    monkeypatch.setattr(_policy, "SWITCH_GATE", 0.2)
    monkeypatch.setattr(_policy, "COX_SWAP_CANDIDATES", 3)
    assert IHTClassifier(k=3)._refit_patience(logistic, rows, 3) == 7
    assert IHTClassifier(k=3)._splice_kwargs(logistic, 3)["add_gate"] == 0.75
    assert IHTRegressor(k=3)._splice_kwargs(squared, 3)["switch_gate"] == 0.2
    assert IHTCoxPHSurvivalAnalysis(k=3)._splice_kwargs(squared, 3)["swap_candidates"] == 3

