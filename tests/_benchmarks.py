"""Import the scripts of ``benchmarks/`` (not a package) by path, once per test session.

The paper constructions (Theorem 2's quadratic, Lemma E.1's instance) are
defined once, in the reproduction scripts, and the tests use those.
"""

import importlib.util
from functools import cache
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@cache
def load_benchmark(name):
    """The module ``benchmarks/<name>.py``."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
