"""The documentation builds with zero warnings (Sphinx ``-W``), examples included.

Skipped when the ``doc`` extra is not installed (``pip install -e ".[doc]"``).
The build runs the sphinx-gallery examples, so it takes about a minute: the
test is marked slow (CI runs it; deselect locally with ``-m "not slow"``).
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "doc"

for _module in ("sphinx", "pydata_sphinx_theme", "numpydoc", "sphinx_gallery", "matplotlib", "pandas",
                "myst_parser", "statsmodels"):  # statsmodels: the data sets of two gallery examples
    pytest.importorskip(_module, reason="the documentation needs the 'doc' extra: pip install -e '.[doc]'")


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    if not (DOC / "conf.py").is_file():
        pytest.skip("no doc/conf.py (documentation sources not present)")
    out = tmp_path / "html"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
           "-d", str(tmp_path / "doctrees"), str(DOC), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"sphinx-build failed ({proc.returncode}):\n{log[-6000:]}"
    assert "build succeeded" in log, log[-3000:]
    for page in ["index.html", "api.html", "reproduction.html", "user_guide/choosing_k.html",
                 "auto_examples/index.html", "generated/sparse_estimators.IHTRegressor.html"]:
        assert (out / page).is_file(), f"{page} was not built"
    # The committed inventories link scikit-learn's and NumPy's names (offline): a docstring's reference, and
    # the gallery's code.
    page = (out / "generated" / "sparse_estimators.model_selection.SparsityCV.html").read_text()
    assert ('href="https://scikit-learn.org/stable/modules/generated/sklearn.model_selection.GridSearchCV.html'
            '#sklearn.model_selection.GridSearchCV"') in page
    assert 'href="https://numpy.org/doc/stable/' in (out / "auto_examples" / "plot_quickstart.html").read_text()


def test_html_repr_links_to_the_api_pages():
    """The HTML repr's link of every public estimator names a page that doc/api.rst generates."""
    import re

    import sparse_estimators
    from sparse_estimators import model_selection
    from sparse_estimators._utils import DOC_URL

    api = (DOC / "api.rst").read_text()
    pages, module = set(), None
    for line in api.splitlines():  # autosummary entries under their currentmodule
        if line.startswith(".. currentmodule::"):
            module = line.split("::")[1].strip()
        elif re.fullmatch(r"   [A-Za-z_]\w*", line) and module:
            pages.add(f"{module}.{line.strip()}")
    classes = [getattr(sparse_estimators, n) for n in sparse_estimators.__all__
               if isinstance(getattr(sparse_estimators, n), type)]
    estimators = [cls() for cls in classes] + [model_selection.SparsityCV(sparse_estimators.IHTRegressor()),
                                               model_selection.SparsityIC(sparse_estimators.IHTRegressor())]
    for est in estimators:
        link = est._get_doc_link()
        assert link.startswith(DOC_URL + "generated/") and link.endswith(".html"), link
        assert link[len(DOC_URL + "generated/"):-len(".html")] in pages, link
        assert link in est._repr_html_()


def test_intersphinx_inventories_are_committed():
    """scikit-learn's and NumPy's inventories are on disk (the build is offline) and Sphinx reads them."""
    from sphinx.util.inventory import InventoryFile

    expected = {"sklearn": ("https://scikit-learn.org/stable/", "py:class", "sklearn.pipeline.Pipeline",
                            "modules/generated/sklearn.pipeline.Pipeline.html#sklearn.pipeline.Pipeline"),
                "numpy": ("https://numpy.org/doc/stable/", "py:function", "numpy.linalg.norm",
                          "reference/generated/numpy.linalg.norm.html#numpy.linalg.norm")}
    for name, (url, role, target, page) in expected.items():
        with open(DOC / "_intersphinx" / f"{name}.inv", "rb") as handle:
            inventory = InventoryFile.load(handle, url, lambda base, uri: base + uri)
        entries = getattr(inventory, "data", inventory)[role]
        entry = entries[target]
        uri = entry.uri if hasattr(entry, "uri") else entry[2]  # (a tuple before Sphinx 8.2)
        assert uri == url + page


def test_user_pages_have_no_issue_numbers_or_internal_goals():
    """Pages for readers speak of the package, not of the tracker's issues or the benchmarks' goals."""
    import re

    pages = [ROOT / "README.md", *DOC.glob("*.md"), *DOC.glob("*.rst"), *(DOC / "user_guide").glob("*.rst"),
             *(DOC / "peers").glob("*.md")]
    pages = [page for page in pages if page.name != "developers.rst"]
    for page in pages:
        text = page.read_text()
        for pattern in (r"\b[Ii]ssue #?\d+", r"the target was", r"\bTargets?:", r"## Targets"):
            found = re.search(pattern, text)
            assert found is None, f"{page.relative_to(ROOT)}: {found.group(0)!r}"


def test_first_pages_show_the_whole_package():
    """The landing page and the README's opening name every part of the package, not only the exact-k models."""
    opening = (ROOT / "README.md").read_text().split("## Set-up")[0]
    index = (DOC / "index.rst").read_text().split("Install\n=======")[0]
    for text in (opening, index):
        for name in ["IHTRegressor", "IHTClassifier", "groups=", "always_select", "SparsityCV", "SparsityIC",
                     "ReducedRankRegressor", "ReducedRankClassifier", "complete_matrix", "LowRankImputer",
                     "IHTCoxPHSurvivalAnalysis", "dask"]:
            assert name in text, name
