"""Sphinx extension: include whatever ``doc/reproduction/`` holds at build time.

The reproduction scripts write Markdown tables and PNG figures named
``paper<NNN>_<anything>.md`` / ``.png`` into ``doc/reproduction/``. The page
``reproduction.md`` contains the marker line ``<!-- reproduction-results -->``;
when Sphinx reads that page, the marker is replaced by MyST markup that, per
paper (in file-name order):

* includes every Markdown file (``{include}`` with ``:relative-images:``, so
  images the tables reference resolve, and a heading offset that nests the
  file's headings under the paper's section);
* shows every PNG the Markdown files do not already reference.

Missing files, papers or the whole directory are fine: what exists is shown,
and a note says when nothing has been generated yet. The page is re-read on
every build, so new results appear without a clean build.

The same mechanism fills ``benchmarks.md`` (marker ``<!-- peers-results -->``)
with every Markdown report in ``doc/peers/`` (the comparison with other
packages written by ``benchmarks/``), and PNGs found there.
"""

import re
from pathlib import Path

MARKER = "<!-- reproduction-results -->"
DOCNAME = "reproduction"
SUBDIR = "reproduction"

#: Section titles of the papers the package implements (others get a generic one).
PAPERS = {
    "000": "Regularized IHT: Axiotis & Sviridenko, *Iterative Hard Thresholding with Adaptive Regularization*",
    "001": "Accelerated IHT: Khanna & Kyrillidis, *IHT dies hard*",
    "002": "Thresholding operators: Liu & Barber, *Between hard and soft thresholding*",
    "004": "I-OBS: Wu et al., *The Iterative Optimal Brain Surgeon*",
}

_NAME = re.compile(r"^paper(\d+)_.+\.(md|png)$")
_HEADING = re.compile(r"^(#{1,6})\s", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
#: the files a page places itself: the argument of an include, figure or image directive
_PLACED = re.compile(r"^(?:```|~~~)\{(?:include|figure|image)\}\s+(\S+)", re.MULTILINE)


def _files(srcdir):
    """``{paper_number: {"md": [...], "png": [...]}}`` for the files present now."""
    folder = Path(srcdir) / SUBDIR
    groups = {}
    if not folder.is_dir():
        return groups
    for path in sorted(folder.iterdir()):
        match = _NAME.match(path.name)
        if match and path.is_file():
            groups.setdefault(match.group(1), {"md": [], "png": []})[match.group(2)].append(path)
    return groups


def _heading_offset(text, section_level=2):
    """Offset that puts the file's top heading one level below the paper's section."""
    levels = [len(m.group(1)) for m in _HEADING.finditer(_FENCE.sub("", text))]
    if not levels:
        return 0
    return max(0, section_level + 1 - min(levels))


def render(srcdir, page=""):
    """The MyST markup that replaces the marker."""
    groups = _files(srcdir)
    if not groups:
        return ("```{note}\nNo reproduction results have been generated yet: the reproduction "
                f"scripts write them to `doc/{SUBDIR}/` (`paper<NNN>_*.md` and `.png`).\n```\n")
    out = []
    for number in sorted(groups):
        title = PAPERS.get(number, f"Paper {number}")
        out.append(f"## {title}\n")
        referenced = set()
        for md in groups[number]["md"]:
            text = md.read_text(encoding="utf-8", errors="replace")
            referenced.update(png.name for png in groups[number]["png"] if png.name in text)
            if not text.strip():
                continue
            rel = f"{SUBDIR}/{md.name}"
            offset = _heading_offset(text)
            options = ":relative-images:\n" + (f":heading-offset: {offset}\n" if offset else "")
            out.append(f"```{{include}} {rel}\n{options}```\n")
        for png in groups[number]["png"]:
            if png.name in referenced:
                continue
            out.append(f"```{{figure}} {SUBDIR}/{png.name}\n:alt: {png.stem}\n:width: 90%\n\n"
                       f"`{png.name}`\n```\n")
    return "\n".join(out)


PEERS_DOCNAME = "benchmarks"
PEERS_MARKER = "<!-- peers-results -->"
PEERS_SUBDIR = "peers"
#: the main head-to-head report, shown before the others
PEERS_FIRST = "comparison.md"


def render_peers(srcdir, page=""):
    """MyST markup including every report of ``doc/peers/`` (``comparison.md`` first, then file-name order).

    Files the page already places with a directive (``{include}``, ``{figure}`` or ``{image}`` of
    ``peers/<file>``, e.g. the plots of ``benchmarks/plot_peers.py``) are left out; a file the text only names
    (a report's path in a sentence) is still included.
    """
    folder = Path(srcdir) / PEERS_SUBDIR
    files = sorted(folder.glob("*.md"), key=lambda path: (path.name != PEERS_FIRST, path.name)) if folder.is_dir() \
        else []
    pngs = sorted(folder.glob("*.png")) if folder.is_dir() else []
    placed = set(_PLACED.findall(page))
    files = [f for f in files if f"{PEERS_SUBDIR}/{f.name}" not in placed]
    pngs = [f for f in pngs if f"{PEERS_SUBDIR}/{f.name}" not in placed]
    if not files and not pngs:
        return ("```{note}\nNo comparison report has been generated yet: the benchmark scripts "
                f"write it to `doc/{PEERS_SUBDIR}/`.\n```\n")
    out, referenced = [], set()
    for md in files:
        text = md.read_text(encoding="utf-8", errors="replace")
        referenced.update(png.name for png in pngs if png.name in text)
        if text.strip():
            offset = _heading_offset(text, section_level=1)
            options = ":relative-images:\n" + (f":heading-offset: {offset}\n" if offset else "")
            out.append(f"```{{include}} {PEERS_SUBDIR}/{md.name}\n{options}```\n")
    for png in pngs:
        if png.name not in referenced:
            out.append(f"```{{figure}} {PEERS_SUBDIR}/{png.name}\n:alt: {png.stem}\n:width: 90%\n\n"
                       f"`{png.name}`\n```\n")
    return "\n".join(out)


def _dependencies(srcdir, docname):
    if docname == DOCNAME:
        return [p for paths in _files(srcdir).values() for p in paths["md"] + paths["png"]]
    folder = Path(srcdir) / PEERS_SUBDIR
    return sorted(folder.glob("*.md")) + sorted(folder.glob("*.png")) if folder.is_dir() else []


_PAGES = {DOCNAME: (MARKER, render), PEERS_DOCNAME: (PEERS_MARKER, render_peers)}


def _source_read(app, docname, source):
    if docname not in _PAGES:
        return
    marker, renderer = _PAGES[docname]
    if marker not in source[0]:
        return
    for path in _dependencies(app.srcdir, docname):
        app.env.note_dependency(str(path))
    source[0] = source[0].replace(marker, renderer(app.srcdir, source[0]))


def _always_outdated(app, env, added, changed, removed):
    # Files may have appeared or vanished since the last build.
    return [name for name in _PAGES if name in env.found_docs]


def setup(app):
    """Register the event handlers."""
    app.connect("source-read", _source_read)
    app.connect("env-get-outdated", _always_outdated)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
