"""glibc malloc's state for timing small fits against abess (see ``small_fits.py``'s description).

abess's time on small problems depends on whether glibc has raised its dynamic
mmap and trim thresholds (after large frees, as inside ``compare_peers.py``);
ours hardly does. A timing script calls :func:`ensure_fast_malloc` first, so
that its figures compare with ``compare_peers.py``'s, and prints
:func:`malloc_state`.
"""

import os
import sys

#: glibc malloc's state after large frees (raised mmap and trim thresholds), in which abess runs inside
#: compare_peers.py; set for a timing run unless its --malloc-default
FAST_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "2000000000",
               "MALLOC_TOP_PAD_": "268435456"}


def malloc_state():
    """``'fast-malloc'`` when the environment sets FAST_MALLOC's values, ``'default'`` when it sets none of them."""
    values = [os.environ.get(name) for name in FAST_MALLOC]
    if values == list(FAST_MALLOC.values()):
        return "fast-malloc"
    if not any(values):
        return "default"
    return "custom (" + ", ".join(f"{name}={os.environ.get(name)}" for name in FAST_MALLOC) + ")"


def ensure_fast_malloc(script, argv):
    """Run ``script`` again with ``argv`` in the fast-malloc state unless the three variables are set.

    glibc reads them at start-up only, hence the new process; when they are
    all set already this returns, else it never does.
    """
    if all(name in os.environ for name in FAST_MALLOC):
        return
    env = dict(os.environ, **{name: value for name, value in FAST_MALLOC.items() if name not in os.environ})
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, os.path.abspath(script), *argv], env)
