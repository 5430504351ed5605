"""One-hot codes of the categorical columns of an encoded matrix (choice indices), the form in
which the kernels and the tree GP's inner-node features see a categorical parameter."""

from __future__ import annotations

import numpy as np
import torch

from condsamplers.space import FeatureSpec


def one_hot(column: torch.Tensor, n_categories: int) -> torch.Tensor:
    """One-hot rows ``(n, n_categories)`` of a column of choice indices (no gradient)."""
    index = column.detach().round().long().clamp(0, n_categories - 1)
    return torch.nn.functional.one_hot(index, n_categories).to(column.dtype)


def one_hot_block(
    X: torch.Tensor, features: FeatureSpec
) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
    """``(columns, sizes, block)``: the categorical columns of ``X``, their numbers of
    choices, and the :func:`one_hot` of each, side by side in column order, from one scatter
    (the same values as one call per column, at the cost of one)."""
    columns = np.flatnonzero(features.n_categories > 0)
    sizes = features.n_categories[columns].astype(np.int64)
    index = X[:, torch.as_tensor(columns, dtype=torch.long)].detach().round().long()
    index = torch.minimum(index.clamp_min(0), torch.as_tensor(sizes - 1))
    offsets = torch.as_tensor(np.cumsum(sizes) - sizes)
    block = torch.zeros(X.shape[0], int(sizes.sum()), dtype=X.dtype)
    block.scatter_(1, index + offsets, 1.0)
    return columns, sizes, block


def one_hot_columns(X: torch.Tensor, features: FeatureSpec) -> dict[int, torch.Tensor]:
    """:func:`one_hot` of every categorical column of ``X``, by column (:func:`one_hot_block`
    split)."""
    columns, sizes, block = one_hot_block(X, features)
    if len(columns) == 0:
        return {}
    split = torch.split(block, sizes.tolist(), dim=1)
    return {int(j): part for j, part in zip(columns, split, strict=True)}
