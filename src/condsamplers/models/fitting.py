"""What every GP-type model needs to fit its hyperparameters: standardised targets, the
priors, the Cholesky with jitter, and a MAP search by L-BFGS-B from several starts.

Hyperparameters are unconstrained ("raw") torch tensors in a dict; a model supplies its log
posterior as a function of that dict (Rasmussen & Williams 2006, eq. 2.30 plus log priors).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import scipy.optimize
import torch

from condsamplers.log import get_logger

_logger = get_logger("condsamplers.models")

Params = dict[str, torch.Tensor]

#: A warm-started fit also starts from the defaults (a refresh) once the data have grown by
#: this factor since the last refresh.
REFRESH_GROWTH = 1.1
#: Between refreshes, a warm fit keeps the previous hyperparameters, without optimising, while
#: the log posterior per observation at them is at most this far (nats) below that of the last
#: optimisation: the new observations agree with them.
KEEP_MAX_DROP = 0.1
#: L-BFGS-B iterations of a warm fit between refreshes (the previous optimum its only start;
#: the next steps go on from where it stops).
WARM_MAX_ITER = 30

#: Floor of the noise variance, in units of the standardised ``y``.
MIN_NOISE = 1e-6
#: Bounds of every raw hyperparameter in the L-BFGS-B search.
RAW_BOUND = 12.0
_MAX_JITTER_TRIES = 6


class NumericalError(RuntimeError):
    """A kernel matrix stayed non positive definite after jitter."""


def robust_cholesky(K: torch.Tensor, log: bool = True) -> torch.Tensor:
    """Cholesky factor of ``K`` (or of a batch of matrices), adding diagonal jitter (logged)
    until it succeeds."""
    L, info = torch.linalg.cholesky_ex(K)
    if not bool((info != 0).any()):
        return L
    eye = torch.eye(K.shape[-1], dtype=K.dtype)
    diagonal = K.diagonal(dim1=-2, dim2=-1)
    jitter = 1e-8 * float(diagonal.mean().detach().clamp_min(1e-12))
    for _ in range(_MAX_JITTER_TRIES):
        L, info = torch.linalg.cholesky_ex(K + jitter * eye)
        if not bool((info != 0).any()):
            if log:
                _logger.warning(
                    "Kernel matrix was not positive definite; added jitter %.1e to its diagonal.",
                    jitter,
                )
            return L
        jitter *= 10.0
    raise NumericalError(
        f"Kernel matrix is not positive definite even with jitter {jitter / 10:.1e}."
    )


def refresh_due(n: int, last_refresh_n: int) -> bool:
    """Whether a warm-started fit on ``n`` observations also starts from the defaults: the
    data have grown by ``REFRESH_GROWTH`` since the last refresh (on ``last_refresh_n``)."""
    return n >= REFRESH_GROWTH * last_refresh_n


def keeps_hyperparameters(
    n: int,
    last_refresh_n: int,
    optimised_per_observation: float,
    log_posterior_at_previous: Callable[[], float],
) -> bool:
    """Whether a fit on ``n`` observations keeps the previous hyperparameters without
    optimising them: no refresh is due, and the log posterior per observation at them
    (``log_posterior_at_previous() / n``, evaluated only when no refresh is due) is at most
    ``KEEP_MAX_DROP`` below that of the last optimisation. The schedule every GP-type model
    shares: most BO steps then cost one factorisation instead of a hyperparameter search."""
    if refresh_due(n, last_refresh_n):
        return False
    return log_posterior_at_previous() / n >= optimised_per_observation - KEEP_MAX_DROP


def noise_variance_of(params: Params, min_noise: float, y_std: float) -> float:
    """The fitted noise variance ``exp(log_noise) + min_noise`` of standardised ``y``, in the
    units of ``y``."""
    return (float(torch.exp(params["log_noise"].detach())[0]) + min_noise) * float(y_std) ** 2


def gamma_log_prior(x: torch.Tensor, concentration: float, rate: float) -> torch.Tensor:
    """Log density of Gamma(concentration, rate) at ``x``, up to a constant."""
    return (concentration - 1.0) * torch.log(x) - rate * x


def standardise(y: np.ndarray, model_name: str) -> tuple[torch.Tensor, float, float]:
    """``(z, mean, std)`` with ``z = (y - mean) / std``; a constant ``y`` keeps ``std = 1``.

    ``y`` counts as constant when its spread is within rounding of its mean (``std <= 10 eps
    |mean|``, eps the float64 machine epsilon, as scikit-learn's ``normalize_y`` treats a zero
    scale): a target whose values all lie within ``1e-13`` of each other but differ by more than
    rounding is still standardised, and fitted as well as one on a unit scale.
    """
    y = np.asarray(y, dtype=float)
    if y.shape[0] == 0:
        raise ValueError(f"{model_name}.fit needs at least one observation.")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{model_name}.fit: y contains NaN or inf; filter or clip it first.")
    mean = float(y.mean())
    std = float(y.std())
    rounding = 10.0 * float(np.finfo(float).eps) * abs(mean)
    std = std if std > max(rounding, float(np.finfo(float).tiny)) else 1.0
    return torch.as_tensor((y - mean) / std, dtype=torch.float64), mean, std


def evidence_of_values(log_ml_standardised: float, n: int, y_std: float) -> float:
    """``log p(y) = log p(z) - n log s``: the evidence of values ``y`` whose standardised
    ``z = (y - m) / s`` have the log marginal likelihood ``log p(z)`` (the change of variables
    of an affine map; what compares fits to differently warped values, Snelson et al. 2004,
    eq. 8)."""
    return float(log_ml_standardised) - n * math.log(y_std)


def random_restarts(default: Params, n: int, seed: int | None) -> list[Params]:
    """``n`` starts drawn as the defaults plus standard normal noise on every raw value."""
    generator = torch.Generator().manual_seed(0 if seed is None else int(seed))
    return [
        {
            k: v + torch.randn(v.shape, generator=generator, dtype=v.dtype)
            for k, v in default.items()
        }
        for _ in range(n)
    ]


def flat_layout(
    template: Params,
) -> tuple[Callable[[Params], np.ndarray], Callable[[torch.Tensor], Params]]:
    """``(pack, unpack)`` between a hyperparameter dict shaped like ``template`` and one flat
    vector (keys in sorted order): what scipy's optimiser and the slice sampler work on."""
    keys = sorted(template)
    shapes = {k: template[k].shape for k in keys}
    sizes = [int(np.prod(shapes[k])) for k in keys]

    def pack(params: Params) -> np.ndarray:
        return torch.cat([params[k].detach().reshape(-1) for k in keys]).numpy().copy()

    def unpack(vector: torch.Tensor) -> Params:
        parts = torch.split(vector, sizes)
        return {k: p.reshape(shapes[k]) for k, p in zip(keys, parts, strict=True)}

    return pack, unpack


def maximise_log_posterior(
    log_posterior: Callable[[Params], torch.Tensor],
    starts: list[Params],
    n_observations: int,
    max_iter: int,
) -> Params | None:
    """MAP hyperparameters: L-BFGS-B on ``-log_posterior / n`` from each start, best kept.

    A start whose evaluation fails (non-PD matrix, non-finite value) is abandoned; ``None`` if
    every start failed.
    """
    pack, unpack = flat_layout(starts[0])

    def loss_and_grad(flat: np.ndarray) -> tuple[float, np.ndarray]:
        vector = torch.tensor(flat, dtype=torch.float64, requires_grad=True)
        loss = -log_posterior(unpack(vector)) / n_observations
        loss.backward()
        grad = vector.grad.numpy()  # type: ignore[union-attr]
        if not (np.isfinite(loss.item()) and np.all(np.isfinite(grad))):
            return 1e10, np.zeros_like(flat)
        return loss.item(), grad

    best: tuple[float, np.ndarray] | None = None
    for start in starts:
        x0 = pack(start)
        try:
            result = scipy.optimize.minimize(
                loss_and_grad,
                x0,
                jac=True,
                method="L-BFGS-B",
                bounds=[(-RAW_BOUND, RAW_BOUND)] * len(x0),
                options={"maxiter": max_iter, "gtol": 1e-4},
            )
        except NumericalError:
            continue
        usable = np.isfinite(result.fun) and result.fun < 1e10
        if usable and (best is None or result.fun < best[0]):
            best = (float(result.fun), result.x)
    if best is None:
        return None
    return unpack(torch.as_tensor(best[1], dtype=torch.float64))


#: Initial width of a slice-sampling bracket, in raw (log-scale) hyperparameter units.
SLICE_WIDTH = 1.0
#: Shrinkage steps before a coordinate keeps its value (the bracket is then ~1e-9 wide).
_MAX_SHRINK = 30


def _safe_log_density(log_density: Callable[[Params], torch.Tensor], params: Params) -> float:
    """``log_density(params)`` as a float; ``-inf`` where it fails (non-PD, non-finite)."""
    try:
        with torch.no_grad():
            value = float(log_density(params))
    except NumericalError:
        return -np.inf
    return value if np.isfinite(value) else -np.inf


def slice_sample(
    log_density: Callable[[Params], torch.Tensor],
    start: Params,
    n_samples: int,
    n_burn: int,
    thin: int,
    seed: int | None,
) -> list[Params]:
    """Hyperparameter samples by coordinate-wise slice sampling with stepping out (Neal 2003,
    sec. 4), the sampler Snoek, Larochelle & Adams (2012, sec. 3.2) use to marginalise a GP's
    hyperparameters; ``log_density`` is the (unnormalised) log posterior of the raw values,
    restricted to the box ``[-RAW_BOUND, RAW_BOUND]`` of the MAP search.

    The chain starts at ``start`` (the MAP values), runs ``n_burn`` sweeps, then keeps one
    sample every ``thin`` sweeps. A sweep updates every raw value once, in a random order. A
    value where ``log_density`` fails (a kernel matrix not positive definite, a non-finite
    value) is outside the slice. If ``start`` itself fails, every sample is ``start``.
    """
    if n_samples < 1 or n_burn < 0 or thin < 1:
        raise ValueError(
            f"slice_sample needs n_samples >= 1, n_burn >= 0 and thin >= 1; got {n_samples!r}, "
            f"{n_burn!r}, {thin!r}."
        )
    rng = np.random.default_rng(seed)
    pack, unpack_tensor = flat_layout(start)

    def unpack(vector: np.ndarray) -> Params:
        return unpack_tensor(torch.as_tensor(vector, dtype=torch.float64))

    x = np.clip(pack(start), -RAW_BOUND, RAW_BOUND)
    current = _safe_log_density(log_density, unpack(x))
    if not np.isfinite(current):
        _logger.warning("Hyperparameter sampling: the start has no finite density; kept it.")
        return [unpack(x) for _ in range(n_samples)]

    def at(i: int, value: float) -> float:
        trial = x.copy()
        trial[i] = value
        return _safe_log_density(log_density, unpack(trial))

    def update(i: int) -> None:
        nonlocal current
        level = current + np.log(rng.uniform())
        left = x[i] - SLICE_WIDTH * rng.uniform()
        right = left + SLICE_WIDTH
        # Stepping out without a limit (valid for any width, Neal 2003 sec. 4.1): the box, where
        # the density ends, stops it after at most 2 RAW_BOUND / SLICE_WIDTH steps.
        while left > -RAW_BOUND and at(i, left) >= level:
            left -= SLICE_WIDTH
        while right < RAW_BOUND and at(i, right) >= level:
            right += SLICE_WIDTH
        left, right = max(left, -RAW_BOUND), min(right, RAW_BOUND)
        for _ in range(_MAX_SHRINK):
            proposal = rng.uniform(left, right)
            value = at(i, proposal)
            if value >= level:
                x[i], current = proposal, value
                return
            if proposal < x[i]:
                left = proposal
            else:
                right = proposal

    samples = []
    for sweep in range(n_burn + n_samples * thin):
        for i in rng.permutation(len(x)):
            update(int(i))
        if sweep >= n_burn and (sweep - n_burn + 1) % thin == 0:
            samples.append(unpack(x.copy()))
    return samples
