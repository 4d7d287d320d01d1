"""Entry point of ``python -m sparse_estimators``; see :mod:`sparse_estimators._cli`."""

from ._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
