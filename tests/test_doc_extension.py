"""The docs extension that fills the benchmarks page with the reports of ``doc/peers/`` (no Sphinx needed)."""

import importlib.util
from pathlib import Path

import pytest

_SOURCE = Path(__file__).resolve().parents[1] / "doc" / "_ext" / "reproduction.py"


@pytest.fixture(scope="module")
def extension():
    if not _SOURCE.exists():
        pytest.skip("no doc/_ext/reproduction.py (documentation sources not present)")
    spec = importlib.util.spec_from_file_location("_reproduction_extension", _SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reports_named_in_the_text_are_still_included(extension, tmp_path):
    # a report the page only names in a sentence must appear; one the page includes itself must not appear twice
    peers = tmp_path / "peers"
    peers.mkdir()
    for name in ("comparison.md", "glm.md", "summary_plain.md", "large_k.md"):
        (peers / name).write_text(f"# {name}\n\ntext\n")
    (peers / "plot_f1.png").write_bytes(b"")
    (peers / "plot_time.png").write_bytes(b"")
    page = ("The GLM losses (report `doc/peers/glm.md`) and the plot peers/plot_time.png named in text.\n\n"
            "```{figure} peers/plot_f1.png\n:alt: F1\n```\n\n```{include} peers/summary_plain.md\n```\n")
    out = extension.render_peers(tmp_path, page)
    included = [line.split()[-1] for line in out.splitlines() if line.startswith("```{include}")]
    figures = [line.split()[-1] for line in out.splitlines() if line.startswith("```{figure}")]
    assert included == ["peers/comparison.md", "peers/glm.md", "peers/large_k.md"]
    assert figures == ["peers/plot_time.png"]
