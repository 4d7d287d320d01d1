"""Helpers shared by the command-line tests (tests/test_cli*.py): CSV files in and parsed tables out."""

import csv
import re
import sys

import numpy as np


def _write_csv(path, header, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def _read_csv(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def _selected_table(out):
    """Parse the selected-features table: list of (feature, [coefficients])."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Selected features:"))
    header = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("feature"))
    n_columns = len(lines[header].split()) - 1
    rows = []
    for line in lines[header + 2:]:  # skip the header and the dashes
        if not line.strip():
            break
        *name, = line.split()
        rows.append((" ".join(name[:-n_columns]), [float(v) for v in name[-n_columns:]]))
    return rows


def _cv_scores(out):
    """Parse the cross-validated scores table: {name: (mean, sd)}."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Cross-validated scores ("))
    assert re.match(r"^Cross-validated scores \(\d+-fold, shuffled with seed \d+", lines[start]), lines[start]
    scores = {}
    for line in lines[start + 4:]:  # blank line, header, dashes
        if not line.strip():
            break
        *name, mean, sd = line.split()
        scores[" ".join(name)] = (float(mean), float(sd))
    return scores


def _criterion_table(out):
    """Parse the criterion table under 'k = ...: chosen automatically': list of (k, value, marked)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "chosen automatically" in line)
    rows = []
    for line in lines[start + 4:]:  # blank line, header, dashes
        if not line.strip():
            break
        parts = line.split()
        rows.append((int(parts[0]), float(parts[1]), "<- chosen" in line))
    return rows



def _binary_data(seed=0, n=120):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 5)).round(5)
    y = np.where(X[:, 1] - X[:, 3] + 0.3 * rng.standard_normal(n) > 0, "yes", "no")
    return X, y


def _text_data(seed=0, n=150):
    """price = 2 a + 3 [city == Rome] - 1.5 [sunny == yes] + noise, with numeric distractors."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 3)).round(4)
    city = rng.choice(["Paris", "Rome", "Oslo"], n)
    sunny = rng.choice(["yes", "no"], n)
    y = 2 * X[:, 0] + 3 * (city == "Rome") - 1.5 * (sunny == "yes") + 0.05 * rng.standard_normal(n)
    return X, city, sunny, y


class _BlockImport:
    """Meta-path finder that makes ``import <name>`` fail, as if the package were not installed."""

    def __init__(self, name):
        self.name = name

    def find_spec(self, name, path=None, target=None):
        if name == self.name or name.startswith(self.name + "."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None


def _block(monkeypatch, name):
    for module in [module for module in sys.modules if module == name or module.startswith(name + ".")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(sys, "meta_path", [_BlockImport(name), *sys.meta_path])
