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
                "myst_parser"):
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
