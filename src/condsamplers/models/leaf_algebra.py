"""Gaussian quadratic forms and log-determinants with an analytic gradient.

One concern: for a batch of symmetric positive definite ``K`` (``(B, m, m)``) and right-hand
sides ``W`` (``(B, m, k)``), the quantities eq. 3 of the tree GP needs from each leaf (and an
exact GP's marginal likelihood from its one covariance matrix),

    ``S = W^T K^-1 W``  (``(B, k, k)``)  and  ``log|K|``  (``(B,)``),

through one Cholesky factor ``K = L L^T`` each, with the gradient written out instead of
taken through the factorisation by autograd. For a loss with upstream gradients ``G = dl/dS``
and ``g = dl/dlog|K|``, and ``C = K^-1 W``,

    ``dl/dK = g K^-1 - C G_s C^T``  and  ``dl/dW = C (G + G^T)``,  ``G_s = (G + G^T) / 2``

(Rasmussen & Williams 2006, eq. A.9 and 5.9: ``d K^-1 = -K^-1 dK K^-1``, ``d log|K| =
tr(K^-1 dK)``). Only the symmetric part of ``dl/dK`` is returned, which is all that a ``K``
built symmetric passes on. That costs one ``K^-1`` from ``L`` (``O(m^3)``) and products of
order ``m^2 k``, where autograd's backward of the Cholesky factor and of the triangular solve
costs several ``O(m^3)`` products: for leaves of 300-700 rows the gradient takes about half
the time (measured on the tree GP at 10,000 trials of ``jenatton_large`` and on an exact GP
of 1000 rows).
"""

from __future__ import annotations

from typing import Any

import torch

from condsamplers.models.fitting import robust_cholesky

#: From this many rows a covariance matrix takes :func:`quadratic_forms`'s gradient: its cubic
#: cost dwarfs the per-call overhead. Smaller matrices keep autograd's, so that studies of a few
#: hundred trials run the arithmetic their recorded figures were measured with, bit for bit.
ANALYTIC_GRADIENT_ROWS = 256


class _QuadraticForms(torch.autograd.Function):
    """``(S, log|K|, L, A)`` with ``A = L^-1 W``; ``L`` and ``A`` carry no gradient."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, K: torch.Tensor, W: torch.Tensor, log: bool
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        L = robust_cholesky(K, log=log)
        A = torch.linalg.solve_triangular(L, W, upper=False)
        S = A.transpose(-2, -1) @ A
        log_det = 2.0 * torch.log(L.diagonal(dim1=-2, dim2=-1)).sum(-1)
        ctx.save_for_backward(L, A)
        ctx.mark_non_differentiable(L, A)
        return S, log_det, L, A

    @staticmethod
    def backward(  # type: ignore[override]
        ctx: Any,
        grad_S: torch.Tensor,
        grad_log_det: torch.Tensor,
        _grad_L: torch.Tensor | None,
        _grad_A: torch.Tensor | None,
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, None]:
        L, A = ctx.saved_tensors
        C = torch.linalg.solve_triangular(L.transpose(-2, -1), A, upper=True)  # K^-1 W
        CG = C @ (grad_S + grad_S.transpose(-2, -1))  # dl/dW
        grad_K = None
        if ctx.needs_input_grad[0]:
            grad_K = -0.5 * CG @ C.transpose(-2, -1)
            grad_K = grad_K + grad_log_det[:, None, None] * torch.cholesky_inverse(L)
        grad_W = CG if ctx.needs_input_grad[1] else None
        return grad_K, grad_W, None


def quadratic_forms(
    K: torch.Tensor, W: torch.Tensor, log: bool = True
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(W^T K^-1 W, log|K|, L, L^-1 W)`` for batches ``K (B, m, m)``, ``W (B, m, k)``.

    The first two carry the analytic gradient of the module docstring; the Cholesky factor
    ``L`` (with diagonal jitter where ``K`` is not positive definite:
    :func:`~condsamplers.models.fitting.robust_cholesky`, logged if ``log``) and ``L^-1 W`` are
    returned without one, for caching.
    """
    return _QuadraticForms.apply(K, W, log)  # type: ignore[no-any-return]
