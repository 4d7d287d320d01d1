"""Composition: a transformer and an estimator whose ``groups`` come from the transformer's output names."""

from ._grouped import GroupsFromTransformer

__all__ = ["GroupsFromTransformer"]
