"""Write the intersphinx inventories of scikit-learn, NumPy and SciPy for the offline documentation build.

The documentation is built without network access, so Sphinx cannot fetch
``objects.inv`` from the projects' sites. This script writes equivalent
inventories (``sklearn.inv``, ``numpy.inv``, ``scipy.inv`` next to it) from
the public API of the installed packages and the page layout of their stable
documentation: one page per class or function under ``modules/generated/``
(scikit-learn), ``reference/generated/`` (NumPy, SciPy). ``doc/conf.py``
maps a project only when its inventory is here. Rerun after upgrading a
package, from the repository root::

    python doc/_intersphinx/make_inventories.py

The files are Sphinx's inventory format (version 2: a text header, then
zlib-compressed lines ``name domain:role priority uri display-name``).
"""

import importlib
import inspect
import pkgutil
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _public(name):
    return not any(part.startswith("_") for part in name.split("."))


def _methods(cls):
    """Public methods defined by the class or a base of the same package."""
    package = cls.__module__.split(".")[0]
    names = []
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") or not callable(member):
            continue
        owner = next((base for base in cls.__mro__ if name in vars(base)), None)
        if owner is not None and owner.__module__.split(".")[0] == package:
            names.append(name)
    return names


def _api(module_names, exported):
    """(module, name, object) for the names each module exports (``__all__``, or ``exported(module)``)."""
    for module_name in module_names:
        try:
            module = importlib.import_module(module_name)
        except Exception:  # (optional dependencies, deprecated modules)
            continue
        for name in exported(module):
            if _public(name) and hasattr(module, name):
                yield module_name, name, getattr(module, name)


def _entries_for(module_name, name, obj, page):
    """Inventory lines of a class (and its methods), a function or a ufunc-like object."""
    full = f"{module_name}.{name}"
    if inspect.isclass(obj):
        yield full, "py:class", page(full)
        for method in _methods(obj):
            target = f"{full}.{method}"
            yield target, "py:method", page(full, target)
    elif inspect.isfunction(obj) or inspect.isbuiltin(obj) or type(obj).__name__ == "_ArrayFunctionDispatcher":
        yield full, "py:function", page(full)
    elif callable(obj):  # ufuncs and other callables documented as data
        yield full, "py:data", page(full)


def _write(path, project, version, entries):
    lines = sorted({f"{name} {role} 1 {uri} -" for name, role, uri in entries})
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
              "# The remainder of this file is compressed using zlib.\n")
    path.write_bytes(header.encode() + zlib.compress(("\n".join(lines) + "\n").encode(), 9))
    print(f"{path.name}: {len(lines)} objects ({project} {version})")


def sklearn_entries():
    """scikit-learn: ``modules/generated/<name>.html#<name>``, modules under ``api/<module>.html``."""
    import sklearn

    def page(full, anchor=None):
        return f"modules/generated/{full}.html#{anchor or full}"

    modules = ["sklearn"] + [info.name for info in pkgutil.walk_packages(sklearn.__path__, "sklearn.")
                             if _public(info.name) and ".tests" not in info.name and "externals" not in info.name]
    for module_name in modules:
        if module_name != "sklearn" and module_name.count(".") == 1:
            yield module_name, "py:module", f"api/{module_name}.html#module-{module_name}"
    def exported(module):
        """``__all__``, or the classes and functions defined in the module or a private sibling module."""
        if hasattr(module, "__all__"):
            return module.__all__
        homes = (module.__name__, module.__name__.rsplit(".", 1)[0] + "._")
        return [name for name, obj in vars(module).items() if (inspect.isclass(obj) or inspect.isfunction(obj))
                and (obj.__module__ == homes[0] or obj.__module__.startswith(homes[1]))]

    for module_name, name, obj in _api(modules, exported):
        if module_name == "sklearn" and inspect.ismodule(obj):
            continue
        yield from _entries_for(module_name, name, obj, page)


def numpy_entries():
    """NumPy: ``reference/generated/<name>.html#<name>``; numpy.random under ``reference/random/``."""
    import numpy as np

    def page(full, anchor=None):
        if full.startswith("numpy.random."):
            return f"reference/random/generated/{anchor or full}.html#{anchor or full}"
        return f"reference/generated/{anchor or full}.html#{anchor or full}"

    yield "numpy", "py:module", "reference/index.html#module-numpy"
    scalar_types = {name for name, obj in vars(np).items() if inspect.isclass(obj) and issubclass(obj, np.generic)}
    exported = lambda module: getattr(module, "__all__", [])  # noqa: E731
    for module_name, name, obj in _api(["numpy", "numpy.linalg", "numpy.fft", "numpy.testing"], exported):
        if module_name == "numpy" and name in scalar_types:
            yield f"numpy.{name}", "py:class", f"reference/arrays.scalars.html#numpy.{name}"
        elif not inspect.ismodule(obj):
            yield from _entries_for(module_name, name, obj, page)
    random = importlib.import_module("numpy.random")
    yield "numpy.random.default_rng", "py:function", "reference/random/generator.html#numpy.random.default_rng"
    yield "numpy.random.Generator", "py:class", "reference/random/generator.html#numpy.random.Generator"
    yield "numpy.random.RandomState", "py:class", "reference/random/legacy.html#numpy.random.RandomState"
    for cls in (random.Generator, random.RandomState):
        for method in _methods(cls) or [m for m in dir(cls) if not m.startswith("_")]:
            target = f"numpy.random.{cls.__name__}.{method}"
            yield target, "py:method", page(target)
    for name in getattr(random, "__all__", []):
        obj = getattr(random, name, None)
        if callable(obj) and not inspect.isclass(obj) and name != "default_rng":
            yield f"numpy.random.{name}", "py:function", page(f"numpy.random.{name}")


def scipy_entries():
    """SciPy: ``reference/generated/<name>.html#<name>``, modules under ``reference/<module>.html``."""
    def page(full, anchor=None):
        return f"reference/generated/{anchor or full}.html#{anchor or full}"

    modules = ["scipy.sparse", "scipy.sparse.linalg", "scipy.linalg", "scipy.optimize", "scipy.stats",
               "scipy.special"]
    for module_name in modules:
        yield module_name, "py:module", f"reference/{module_name[len('scipy.'):]}.html#module-{module_name}"
    exported = lambda module: getattr(module, "__all__", [])  # noqa: E731
    for module_name, name, obj in _api(modules, exported):
        if not inspect.ismodule(obj):
            yield from _entries_for(module_name, name, obj, page)


def main():
    """Write the three inventories."""
    import numpy
    import scipy
    import sklearn

    for file, project, package, entries in [("sklearn.inv", "scikit-learn", sklearn, sklearn_entries),
                                            ("numpy.inv", "NumPy", numpy, numpy_entries),
                                            ("scipy.inv", "SciPy", scipy, scipy_entries)]:
        version = ".".join(package.__version__.split(".")[:2])
        _write(HERE / file, project, version, list(entries()))


if __name__ == "__main__":
    main()
