"""Sphinx extension: the ``source`` role, a link to a file of the repository.

Pages and docstrings cite scripts and tests of the repository (which are not
rendered as pages) as ``:source:`benchmarks/compare_peers.py``` (in MyST:
``{source}`benchmarks/compare_peers.py```), the path relative to the
repository root. The role renders the path as code and links it to a copy of
the file shipped with the HTML pages (Sphinx's ``download`` mechanism), so it
works offline and on any host; ``:source:`text <path>``` sets the link text.
In ``help()`` the docstring keeps the readable path.
"""

from docutils import nodes
from sphinx import addnodes
from sphinx.roles import XRefRole


class SourceRole(XRefRole):
    """``download_reference`` to ``<repository root>/<path>`` shown as a literal."""

    def process_link(self, env, refnode, has_explicit_title, title, target):
        """Resolve the path against the repository root (the parent of the doc folder)."""
        target = target.strip().lstrip("/")
        return title, "/../" + target


def setup(app):
    """Register the role."""
    app.add_role("source", SourceRole(nodeclass=addnodes.download_reference, innernodeclass=nodes.literal,
                                      warn_dangling=True))
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
