"""``DNGOSampler``: Bayesian optimisation with DNGO (Snoek et al., ICML 2015)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from condsamplers.acquisition import DEFAULT_N_FANTASIES  # noqa: F401 (importable from here)
from condsamplers.models.base import Surrogate
from condsamplers.models.dngo import DNGO
from condsamplers.samplers.base import ConditionalSampler

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from condsamplers.samplers.options import SamplerOptions


class DNGOSampler(ConditionalSampler):
    """Bayesian optimisation with a deep network's basis and Bayesian linear regression.

    The surrogate is :class:`condsamplers.models.dngo.DNGO` (Snoek et al. 2015, eq. 4-9): a tanh
    network (3 x 50 by default) trained by MAP on the trials, whose last hidden layer is the
    basis of a Bayesian linear regression with marginal-likelihood hyperparameters. The network
    sees each trial's encoded values, one-hot categorical choices and which parameters are
    active, so one model covers every path of a conditional space; its cost grows linearly with
    the number of trials (no ``n x n`` matrix). Each fit starts from the previous network and
    trains ``n_epochs_warm`` epochs. Proposals maximise log expected improvement over every
    path of the inferred tree; RUNNING trials enter as fantasies through the exact Bayesian
    linear regression update. Usage::

        study = optuna.create_study(sampler=DNGOSampler(seed=0))

    Args:
        hidden_sizes: widths of the network's hidden layers.
        n_epochs: training epochs of the first (cold) network fit.
        n_epochs_warm: training epochs of a fit warm-started from the previous network.
        max_updates: cap on the Adam steps of one fit.
        integrate_hyperparameters: average the Bayesian linear regression over a posterior
            grid of its precision hyperparameters instead of their MAP.
        quadratic_prior_mean: the paper's quadratic prior mean (eq. 9), a bowl centred in the
            search box: far from the data, predictions revert towards high values.
        device: ``"cpu"`` or ``"cuda"`` for the network.
        **options: the arguments every sampler shares (``seed``, ``n_startup_trials``,
            ``independent_sampler``, ``n_candidates``, ``n_local_search``, ``n_restarts``,
            ``n_fantasies``, ``constraints_func``, ``objective_bound``, ``output_warping``;
            :class:`~condsamplers.samplers.options.SamplerOptions`), documented in
            :class:`condsamplers.samplers.base.ConditionalSampler`; ``n_restarts`` are the
            random restarts of the hyperparameter fit.
    """

    #: Every trial: its fit is capped at ``max_updates`` Adam steps, its regression is
    #: linear in ``n``.
    default_max_model_trials = None

    def __init__(
        self,
        *,
        hidden_sizes: tuple[int, ...] = (50, 50, 50),
        n_epochs: int = 500,
        n_epochs_warm: int = 100,
        max_updates: int = 3000,
        integrate_hyperparameters: bool = False,
        quadratic_prior_mean: bool = False,
        device: str = "cpu",
        **options: Unpack[SamplerOptions],
    ) -> None:
        super().__init__(**options)
        self._model_options: dict[str, Any] = dict(
            hidden_sizes=hidden_sizes,
            n_epochs=n_epochs,
            n_epochs_warm=n_epochs_warm,
            max_updates=max_updates,
            integrate_hyperparameters=integrate_hyperparameters,
            quadratic_prior_mean=quadratic_prior_mean,
            device=device,
        )
        DNGO(**self._model_options)  # validates the options now, naming a bad one

    def _make_model(self, seed: int, warm_start: Any) -> Surrogate:
        return DNGO(
            **self._model_options, n_restarts=self._n_restarts, seed=seed, warm_start=warm_start
        )

    def _warm_start_of(self, model: Surrogate) -> Any:
        assert isinstance(model, DNGO)
        return model.warm_start_state()
