"""Tuned policy lives in sparse_estimators/_policy.py only, and is read there at use time."""

import ast
import pathlib

import numpy as np

import sparse_estimators
from sparse_estimators import _policy

PACKAGE = pathlib.Path(sparse_estimators.__file__).parent
POLICY = {name for name in vars(_policy) if name.isupper()}

#: numeric module constants that are not tuned policy, and why (a new entry here needs a reason)
NOT_POLICY = {
    ("losses/_robust.py", "_MAD_TO_SD"): "a mathematical constant, 1 / Phi^{-1}(3/4)",
    ("_cli/__init__.py", "_STATUS_CLOSED_PIPE"): "the shell's convention, 128 + SIGPIPE",
    ("linear_model/_scaling.py", "_MOMENTS_RANGE"): "float64's range: squares of magnitudes in 2^+-500 stay normal",
}


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
