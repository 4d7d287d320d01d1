"""Group sparsity: features in groups kept or dropped together (model-based sparsity, Khanna & Kyrillidis Sec. 2)."""

import numbers

import numpy as np

from ..thresholding._selection import unit_norms
from ._base import Structure


class Groups(Structure):
    """Feature groups: ``k`` counts groups, thresholded on their l2 norms over features and outputs.

    The projection (:meth:`Structure.__call__`) keeps the ``k`` groups of
    largest norm (ties: the group whose label sorts first) and maps their
    norms with the operator's ``shrink`` at ``tau``, the largest norm left
    out, rescaling each kept group (hard thresholding keeps them unchanged).

    Parameters
    ----------
    operator : ThresholdingOperator
    groups : array-like of shape (n_features,)
        One label per feature; features with the same label form a group.
        Labels are compared as given: all numbers (compared by value) or all
        strings. A mix of numbers and strings is refused with a TypeError:
        numpy would read every label as a string and merge ``1`` with
        ``"1"``. Object arrays are read like lists.

    Attributes
    ----------
    labels : ndarray of shape (n_groups,)
        The sorted distinct labels.
    codes : ndarray of shape (n_features,)
        The group index of each feature (into ``labels``).
    """

    #: the splicing search exchanges whole groups (``solvers.splice`` with ``structure=``)
    exchanges = True
    unit_name = "the number of groups"

    def __init__(self, operator, groups):
        super().__init__(operator)
        groups = _group_labels(groups)
        if groups.ndim != 1:
            raise TypeError(f"group labels must be scalars, one per feature; got an array of shape {groups.shape}")
        self.labels, self.codes = np.unique(groups, return_inverse=True)
        self.codes = self.codes.ravel()

    def n_units(self, n_features):  # noqa: D102
        return self.labels.size

    def unit_scores(self, G):  # noqa: D102
        return unit_norms(G, self.codes, self.labels.size)

    def units(self, features):  # noqa: D102
        return np.unique(self.codes[np.asarray(features, dtype=np.intp)])

    def features(self, units):  # noqa: D102
        chosen = np.zeros(self.labels.size, dtype=bool)
        chosen[np.asarray(units, dtype=np.intp)] = True
        return np.flatnonzero(chosen[self.codes])  # (sorted; one pass over the p codes, no per-group arrays)

    def unit_of_features(self, n_features):  # noqa: D102
        return self.codes

    def as_rows(self):
        """:class:`Rows` with the same operator, forced and excluded features, when every group is one feature.

        Then ``k`` groups are ``k`` features and the fit is the fit without
        groups: the estimators solve it as such (the features' searches, not
        the groups'). None when a group has two or more features.
        """
        if self.labels.size != self.codes.size:
            return None
        from ._base import Rows

        rows = Rows(self.operator)
        if self.forced is not None:
            rows = rows.with_forced(self.features(self.forced))
        if self.excluded is not None:
            rows = rows.with_excluded(self.features(self.excluded))
        return rows


def _label_kind(label):
    """``'string'``, ``'number'`` or the type's name: labels of two kinds cannot be ordered or told apart."""
    if isinstance(label, (str, bytes, np.str_, np.bytes_)):
        return "string"
    if isinstance(label, numbers.Number):
        return "number"
    return type(label).__name__


def _group_labels(groups):
    """The labels as an array, refusing a mix of numbers and strings (a TypeError naming two of them) and NaN.

    A list or an object array is checked element by element before numpy
    converts it: ``np.asarray([1, "1"])`` would make both ``'1'``. NaN
    labels are refused (a ValueError naming the features): ``np.unique``
    puts every NaN of a float array in one group, and keeps those of an
    object array apart, so a missing label has no meaning to give.
    """
    if isinstance(groups, np.ndarray) and groups.dtype != object:
        if groups.dtype.kind in "fc":
            _refuse_nan(np.flatnonzero(np.isnan(groups)))
        return groups  # (one dtype: compared as numpy compares them)
    values = groups.tolist() if isinstance(groups, np.ndarray) else list(groups)
    first = {}
    for value in values:
        first.setdefault(_label_kind(value), value)
    if "string" in first and "number" in first:
        raise TypeError(f"group labels mix numbers and strings ({first['number']!r} and {first['string']!r}): "
                        f"numpy would read every label as a string and merge 1 with '1'; use one kind")
    if "number" in first:
        _refuse_nan([i for i, value in enumerate(values) if isinstance(value, numbers.Number) and value != value])
    return groups if isinstance(groups, np.ndarray) else np.asarray(groups)


def _refuse_nan(features):
    """Refuse NaN group labels, naming the first few features that have one."""
    if len(features):
        shown = ", ".join(str(int(j)) for j in features[:5]) + (", ..." if len(features) > 5 else "")
        raise ValueError(f"The 'groups' parameter has NaN labels (features {shown}): NaN is no group; give every "
                         f"feature a label (a feature of its own label is a group of one)")


class groups_from_feature_names:  # noqa: N801 - used like a function: ``groups=groups_from_feature_names(...)``
    """Group the columns a ``ColumnTransformer`` makes by the original variable each comes from.

    Pass an instance as an estimator's ``groups``: at fit time it receives
    the names of the estimator's input features and labels each by the longest of ``variables``
    that the name, without its transformer prefix (``"onehot__"``), equals
    or starts with followed by ``"_"`` (``OneHotEncoder``'s
    ``"color_red"``). ``k`` then counts original variables, whatever the
    number of dummy columns of each, which can differ between the folds of
    a cross-validation.

    The names come from the fitted transformer with
    :class:`~sparse_estimators.compose.GroupsFromTransformer`
    (``GroupsFromTransformer(column_transformer, IHTRegressor(groups=...))``),
    whatever its output (a scipy.sparse one-hot matrix included); in a plain
    ``Pipeline`` they reach the estimator only as a DataFrame's columns
    (``feature_names_in_``: ``.set_output(transform="pandas")`` on the
    transformer, which needs dense output).

    Parameters
    ----------
    variables : sequence of str
        The original variables (e.g. the columns of the DataFrame given to
        the ``ColumnTransformer``).
    prefix_separator : str, default="__"
        What separates the transformer's name from the feature's in the
        transformer's output names (``verbose_feature_names_out=True``);
        names without it are used as they are.

    Examples
    --------
    >>> from sparse_estimators.structures import groups_from_feature_names
    >>> groups = groups_from_feature_names(["color", "size", "size_class"])
    >>> groups(["onehot__color_red", "onehot__color_blue", "num__size", "onehot__size_class_L"]).tolist()
    ['color', 'color', 'size', 'size_class']
    """

    def __init__(self, variables, *, prefix_separator="__"):
        self.variables = [str(v) for v in variables]
        self.prefix_separator = prefix_separator

    def __call__(self, feature_names):
        """One label (an original variable) per feature name; a ValueError names the first unmatched one."""
        by_length = sorted(self.variables, key=len, reverse=True)
        labels = []
        for name in map(str, feature_names):
            base = name.split(self.prefix_separator, 1)[1] if self.prefix_separator in name else name
            match = next((v for v in by_length if base == v or base.startswith(v + "_")), None)
            if match is None:
                raise ValueError(f"groups_from_feature_names: the feature {name!r} comes from none of the "
                                 f"variables {self.variables}.")
            labels.append(match)
        return np.array(labels, dtype=object)

    def __repr__(self):
        return f"groups_from_feature_names({self.variables!r})"

    def __eq__(self, other):
        return (type(other) is type(self) and other.variables == self.variables
                and other.prefix_separator == self.prefix_separator)

    __hash__ = None
