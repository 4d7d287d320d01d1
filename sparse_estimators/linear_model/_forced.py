"""``always_select``: the features (or groups) every fit keeps, read into unit indices.

Without ``groups`` it holds feature indices, column names (resolved against
``feature_names_in_``, as a ``ColumnTransformer`` reads a DataFrame's
columns) or a boolean mask of one entry per feature; with ``groups``, group
labels compared as given.
"""

import numpy as np

from ..structures import Groups


def forced_units(always_select, structure, n_features, feature_names=None):
    """The unit indices ``always_select`` names for ``structure`` on ``n_features`` features, validated.

    Parameters
    ----------
    always_select : array-like
        The parameter (not None).
    structure : Structure
        Rows, or the ``groups`` (then ``always_select`` holds group labels).
    n_features : int
    feature_names : ndarray of str or None
        The estimator's ``feature_names_in_`` (None: ``X`` had no names).

    Returns
    -------
    ndarray of int
        Unit indices (features, or groups), as given (duplicates and order
        are left to ``Structure.with_forced``).

    Raises
    ------
    ValueError
        Naming ``always_select``: not 1-D, indices out of range, unknown
        names or labels, names without feature names, a mask of another
        length, or a mix of kinds.
    """
    chosen = np.atleast_1d(np.asarray(always_select))
    if chosen.ndim != 1:
        raise ValueError(f"The 'always_select' parameter must be a 1-D sequence, got shape {chosen.shape}.")
    if isinstance(structure, Groups):
        return _group_units(always_select, chosen, structure)
    if chosen.size and chosen.dtype.kind in "iu" and not _has_booleans(always_select):  # (indices: as they were)
        if chosen.min() < 0 or chosen.max() >= n_features:
            raise ValueError(f"The 'always_select' parameter must hold indices in [0, {n_features}), "
                             f"got {sorted(set(chosen.tolist()))}.")
        return chosen
    if not chosen.size:
        return chosen
    values = np.asarray(always_select, dtype=object).ravel().tolist()  # (each as given: np.asarray reads 1 as '1')
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        if chosen.size != n_features:
            raise ValueError(f"The 'always_select' parameter is a boolean mask of {chosen.size} entries; a mask "
                             f"needs one entry per feature, {n_features}.")
        return np.flatnonzero(chosen)
    if all(isinstance(v, str) for v in values):
        return _named_features(values, feature_names)
    kinds = sorted({"booleans" if isinstance(v, (bool, np.bool_)) else "strings" if isinstance(v, str)
                    else "integers" if isinstance(v, (int, np.integer)) else type(v).__name__ for v in values})
    raise ValueError(f"The 'always_select' parameter must hold feature indices (integers) or feature names "
                     f"(strings), or be a boolean mask of one entry per feature, without 'groups'; got "
                     f"{' and '.join(kinds)}: {values!r}.")


def _has_booleans(always_select):
    """Whether a sequence holds booleans (``np.asarray([True, 2])`` is ``[1, 2]``: a mix, not indices)."""
    if isinstance(always_select, np.ndarray):
        return always_select.dtype.kind == "b"
    return any(isinstance(v, (bool, np.bool_)) for v in np.asarray(always_select, dtype=object).ravel())


def _named_features(names, feature_names):
    """The indices of the features named ``names`` in ``feature_names``."""
    if feature_names is None:
        raise ValueError(f"The 'always_select' parameter names features ({names!r}), but X has no feature "
                         "names: fit on a DataFrame with these columns (in a Pipeline, .set_output(transform="
                         "'pandas') on the transformers before this estimator) or pass column indices.")
    index = {name: j for j, name in enumerate(np.asarray(feature_names).tolist())}
    missing = [name for name in names if name not in index]
    if missing:
        raise ValueError(f"The 'always_select' parameter names features that are not in X's columns "
                         f"(feature_names_in_): {missing}.")
    return np.array([index[name] for name in names], dtype=np.intp)


def _group_units(always_select, chosen, structure):
    """The units of the groups ``always_select`` labels, each label compared as given."""
    # (not through np.asarray, which would make 1 and '1' equal)
    values = chosen.tolist() if isinstance(always_select, np.ndarray) else list(always_select)
    if structure.labels.dtype.kind != "b" and any(isinstance(v, (bool, np.bool_)) for v in values):
        raise ValueError("The 'always_select' parameter holds group labels with 'groups', got booleans: a "
                         "mask is not accepted (True would read as the label 1); pass the labels of the "
                         "groups to keep, e.g. those of groups_support_.")
    index = {label: unit for unit, label in enumerate(structure.labels.tolist())}
    missing = [label for label in values if label not in index]
    if missing:
        raise ValueError(f"The 'always_select' parameter names groups that are not in 'groups': {missing}.")
    return np.array([index[label] for label in values], dtype=np.intp)
