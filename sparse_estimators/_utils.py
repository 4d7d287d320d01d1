"""Helpers shared by the estimators and the model-selection objects."""

from contextlib import contextmanager

__all__ = ["all_or_nothing"]


@contextmanager
def all_or_nothing(estimator):
    """Restore ``estimator``'s attributes if the body raises (KeyboardInterrupt included).

    Used around every ``fit`` of the package, so an interrupted or failed fit
    never leaves an estimator half-fitted.
    """
    state = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(state)
        raise
