"""The shared adapter of the samplers built on an exact GP with a named kernel."""

from __future__ import annotations

from typing import Any, ClassVar

from condsamplers.models.base import Surrogate
from condsamplers.models.gp import ExactGP
from condsamplers.samplers.base import ConditionalSampler


class ExactGPSampler(ConditionalSampler):
    """A :class:`ConditionalSampler` whose surrogate is :class:`ExactGP` with ``kernel_name``;
    the previous fit's hyperparameters warm-start the next one."""

    kernel_name: ClassVar[str]
    #: The GP's constant prior mean, ``"sample"`` or ``"gls"`` (ordinary kriging;
    #: :class:`ExactGP`); ``None``: the kernel's ``default_mean``.
    constant_mean: ClassVar[str | None] = None

    def _make_model(self, seed: int, warm_start: Any) -> Surrogate:
        return ExactGP(
            self.kernel_name,
            n_restarts=self._n_restarts,
            seed=seed,
            warm_start=warm_start,
            mean=self.constant_mean,
        )

    def _warm_start_of(self, model: Surrogate) -> Any:
        assert isinstance(model, ExactGP)
        return model.params_
