"""Exceptions of the command-line interface, one per exit status."""



class _InputError(Exception):
    """A problem with the command line or the input data (exit status 2)."""


class _FitError(Exception):
    """The fit, the cross-validation or the prediction produced nothing usable (exit status 1)."""
