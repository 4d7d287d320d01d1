"""Sphinx configuration of the sparse_estimators documentation.

Build (zero warnings is the bar, CI builds it through ``tests/test_docs.py``)::

    python -m sphinx -W --keep-going -b html doc doc/_build/html
"""

import os
import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("agg")

import sparse_estimators  # noqa: E402

DOC_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(DOC_DIR / "_ext"))

# -- Project ---------------------------------------------------------------------
project = "sparse_estimators"
author = "sparse_estimators developers"
copyright = "sparse_estimators developers, BSD-3-Clause"  # noqa: A001
release = sparse_estimators.__version__
version = ".".join(release.split(".")[:2])

# -- General ---------------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "reproduction",  # doc/_ext/reproduction.py: lists doc/reproduction/ at build time
    "source_files",  # doc/_ext/source_files.py: the :source: role, links to repository files
]

# -- intersphinx: links to scikit-learn, numpy and scipy ----------------------------
# The build runs offline with -W, and an unreachable inventory is an untyped
# warning (it cannot be suppressed), so a project is mapped only when its
# inventory is at hand: a file doc/_intersphinx/<name>.inv (committed; written
# from the installed packages' public API by doc/_intersphinx/make_inventories.py),
# or for every project when SPARSE_ESTIMATORS_DOC_ONLINE=1 (fetched from the
# web). Without either, references to them stay plain text.
extensions.append("sphinx.ext.intersphinx")
_INTERSPHINX = {"sklearn": "https://scikit-learn.org/stable/", "numpy": "https://numpy.org/doc/stable/",
                "scipy": "https://docs.scipy.org/doc/scipy/"}
intersphinx_mapping = {}
for _name, _url in _INTERSPHINX.items():
    _local = DOC_DIR / "_intersphinx" / f"{_name}.inv"
    if _local.is_file():
        intersphinx_mapping[_name] = (_url, str(_local))
    elif os.environ.get("SPARSE_ESTIMATORS_DOC_ONLINE") == "1":
        intersphinx_mapping[_name] = (_url, None)

templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "_templates",
    "Thumbs.db",
    ".DS_Store",
    # Markdown written by the reproduction scripts: included (not built as pages)
    # by reproduction.rst through the ``reproduction`` extension.
    "reproduction/**",
    "peers/**",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
]
default_role = "literal"
pygments_style = "sphinx"
add_function_parentheses = False

# Markdown: only what the reproduction tables need.
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
# The reproduction Markdown files are written by scripts, not by hand: their
# heading levels and links to data files (CSV, logs) are not Sphinx targets.
suppress_warnings = ["myst.header", "myst.xref_missing"]

# -- autodoc / autosummary / numpydoc --------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- sphinx-gallery --------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(DOC_DIR.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("sparse_estimators",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"sparse_estimators": None},
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "min_reported_time": 1,
}

# Examples must not warn either (a ConvergenceWarning in an example is a bug of
# the example); matplotlib's non-interactive backend warning is harmless.
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")
warnings.filterwarnings("ignore", message="FigureCanvasAgg is non-interactive")


# -- HTML ------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sparse_estimators {release}"
html_static_path = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "navbar_align": "left",
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "reproduction": [], "benchmarks": []}
html_context = {"default_mode": "light"}

# Build in parallel-safe, deterministic mode for the examples.
os.environ.setdefault("PYTHONHASHSEED", "0")


# scikit-learn's inherited ``set_output`` docstring refers to labels of
# scikit-learn's own documentation, unresolvable offline: replace it.
def _short_set_output_doc(app, what, name, obj, options, lines):
    if name.endswith(".set_output"):
        lines[:] = ["Set the output container of ``transform`` and ``fit_transform``.", "",
                    "Inherited from scikit-learn (``TransformerMixin.set_output``): ``transform='pandas'``",
                    "returns DataFrames, ``'default'`` NumPy arrays."]


def setup(app):
    """Connect the local docstring hooks."""
    app.connect("autodoc-process-docstring", _short_set_output_doc)
