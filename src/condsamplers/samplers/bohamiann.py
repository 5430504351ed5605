"""``BOHAMIANNSampler``: Bayesian optimisation with a Bayesian neural network sampled by
scale-adapted SGHMC (Springenberg, Klein, Falkner & Hutter, NIPS 2016)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from condsamplers.acquisition import DEFAULT_N_FANTASIES  # noqa: F401 (importable from here)
from condsamplers.models.base import Surrogate
from condsamplers.models.bohamiann import BOHAMIANN
from condsamplers.samplers.base import ConditionalSampler

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from condsamplers.samplers.options import SamplerOptions


class BOHAMIANNSampler(ConditionalSampler):
    """Bayesian optimisation with BOHAMIANN's robust Bayesian neural network.

    The surrogate is :class:`condsamplers.models.bohamiann.BOHAMIANN`: a tanh network (3 x 50)
    whose weights, weight precision and noise are sampled by scale-adapted stochastic gradient
    Hamiltonian Monte Carlo with the supplement's defaults (sec. D.1: step size 1e-2, 50
    samples kept every 50 steps). One persistent chain runs through the whole study: each fit
    continues the previous chain on the new data after ``n_burn_in_warm`` burn-in steps (D.1:
    2000). The network sees each trial's encoded values, one-hot categorical choices and which
    parameters are active. Proposals maximise log expected improvement (mean and variance over
    the samples) over every path of the inferred tree; RUNNING trials enter as fantasies by
    importance reweighting of the samples. Usage::

        study = optuna.create_study(sampler=BOHAMIANNSampler(seed=0))

    Args:
        hidden_sizes: widths of the network's hidden layers.
        n_burn_in: burn-in steps of the first (cold) chain.
        n_burn_in_warm: burn-in steps when the chain continues from the previous fit.
        n_samples: samples kept per fit.
        keep_every: SGHMC steps between kept samples.
        step_size: the SGHMC step size ``eps``.
        noise_prior_median: the median of the log-normal prior on the noise variance
            (standardised ``y``).
        noise_prior_log_var: the variance of ``log sigma^2`` under that prior. The defaults,
            1e-2 and 1, let the noise follow the data; pybnn's 1e-6 and 0.01 pull it towards
            zero, which fits smooth noise-free objectives more closely but can make the model
            overconfident, so that it samples one point over and over.
        device: ``"cpu"`` or ``"cuda"`` for the network.
        **options: the arguments every sampler shares (``seed``, ``n_startup_trials``,
            ``independent_sampler``, ``n_candidates``, ``n_local_search``, ``n_fantasies``,
            ``constraints_func``, ``objective_bound``, ``output_warping``;
            :class:`~condsamplers.samplers.options.SamplerOptions`), documented in
            :class:`condsamplers.samplers.base.ConditionalSampler`; no ``n_restarts``: the
            model has no hyperparameter search to restart.
    """

    #: Every trial: its chain's cost per step does not grow with ``n``.
    default_max_model_trials = None

    def __init__(
        self,
        *,
        hidden_sizes: tuple[int, ...] = (50, 50, 50),
        n_burn_in: int = 5000,
        n_burn_in_warm: int = 2000,
        n_samples: int = 50,
        keep_every: int = 50,
        step_size: float = 1e-2,
        noise_prior_median: float = 1e-2,
        noise_prior_log_var: float = 1.0,
        device: str = "cpu",
        **options: Unpack[SamplerOptions],
    ) -> None:
        if "n_restarts" in options:
            raise TypeError(
                "BOHAMIANNSampler() got the argument 'n_restarts', but its model has no "
                "hyperparameter search to restart (SGHMC samples them); leave it out."
            )
        super().__init__(**options, n_restarts=0)
        self._model_options: dict[str, Any] = dict(
            hidden_sizes=hidden_sizes,
            n_burn_in=n_burn_in,
            n_burn_in_warm=n_burn_in_warm,
            n_samples=n_samples,
            keep_every=keep_every,
            step_size=step_size,
            noise_prior_median=noise_prior_median,
            noise_prior_log_var=noise_prior_log_var,
            device=device,
        )
        BOHAMIANN(**self._model_options)  # validates the options now, naming a bad one

    def _make_model(self, seed: int, warm_start: Any) -> Surrogate:
        return BOHAMIANN(**self._model_options, seed=seed, warm_start=warm_start)

    def _warm_start_of(self, model: Surrogate) -> Any:
        assert isinstance(model, BOHAMIANN)
        return model.warm_start_state()
