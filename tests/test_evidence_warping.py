"""``output_warping="auto"`` (condsamplers.evidence_warping): the log error where the evidence
prefers it, the values as they are where it does not."""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from condsamplers import DNGOSampler, TreeGPSampler
from condsamplers.evidence_warping import fit_by_evidence, natural_bound
from condsamplers.models.dngo import DNGO
from condsamplers.models.gp import ExactGP
from condsamplers.models.tree_gp import TreeGP
from condsamplers.space import FeatureSpec
from condsamplers.warping import log_regret

optuna.logging.set_verbosity(optuna.logging.WARNING)

X = np.linspace(0.0, 1.0, 25)[:, None]
ACTIVE = np.ones_like(X, dtype=bool)
FEATURES = FeatureSpec.numerical(1)
#: An error rate that falls by orders of magnitude (from 0.9 to 0.005): linear in its log.
ERRORS = 0.9 * np.exp(-5.2 * X[:, 0])
#: A smooth objective in [0, 1] with its minimum, 0, inside: a cusp once logged.
QUADRATIC = (X[:, 0] - 0.37) ** 2


@pytest.mark.parametrize(
    ("y", "bound"),
    [
        ([0.1, 0.0, 1.0], 0.0),
        ([-0.9, -1.0, 0.0], -1.0),
        ([0.1, 1.5, 30.0], 0.0),
        ([-0.1, 0.5], None),
        ([-2.0, -0.5], None),
        ([], None),
    ],
)
def test_the_bound_is_zero_for_a_loss_and_minus_one_for_a_negated_accuracy(
    y: list[float], bound: float | None
) -> None:
    assert natural_bound(np.array(y)) == bound


@pytest.mark.parametrize("make", [lambda: TreeGP(seed=0), lambda: ExactGP(seed=0)])
def test_an_error_falling_by_orders_of_magnitude_is_fitted_as_its_log(make) -> None:
    model, y = fit_by_evidence(make(), X, ACTIVE, ERRORS, FEATURES)
    assert np.allclose(y, log_regret(ERRORS, 0.0))
    assert np.allclose(model.predict(X, ACTIVE)[0], y, atol=0.05)


@pytest.mark.parametrize("make", [lambda: TreeGP(seed=0), lambda: ExactGP(seed=0)])
def test_a_smooth_objective_with_its_minimum_at_the_bound_keeps_its_values(make) -> None:
    model, y = fit_by_evidence(make(), X, ACTIVE, QUADRATIC, FEATURES)
    assert np.array_equal(y, QUADRATIC)
    assert np.allclose(model.predict(X, ACTIVE)[0], QUADRATIC, atol=1e-3)


def test_an_accuracy_maximised_is_logged_against_one() -> None:
    accuracy = 1.0 - ERRORS
    _, y = fit_by_evidence(TreeGP(seed=0), X, ACTIVE, -accuracy, FEATURES)
    assert np.allclose(y, log_regret(-accuracy, -1.0))


def test_values_without_a_bound_and_models_without_evidence_keep_their_values() -> None:
    _, y = fit_by_evidence(TreeGP(seed=0), X, ACTIVE, ERRORS - 0.5, FEATURES)
    assert np.array_equal(y, ERRORS - 0.5)
    _, y = fit_by_evidence(DNGO(seed=0, n_epochs=20), X, ACTIVE, ERRORS, FEATURES)
    assert np.array_equal(y, ERRORS)


def test_evidence_is_the_likelihood_of_the_values_in_their_own_units() -> None:
    """Scaling the values by ``a`` changes their density by ``-n log a`` and nothing else."""
    model = ExactGP(seed=0).fit(X, ACTIVE, QUADRATIC, FEATURES)
    scaled = ExactGP(seed=0).fit(X, ACTIVE, 10.0 * QUADRATIC, FEATURES)
    expected = model.log_evidence() - len(X) * np.log(10.0)
    assert scaled.log_evidence() == pytest.approx(expected, abs=1e-6)
    assert DNGO(seed=0, n_epochs=20).fit(X, ACTIVE, ERRORS, FEATURES).log_evidence() is None


def _accuracy_study(sampler: optuna.samplers.BaseSampler) -> optuna.Study:
    def accuracy(trial: optuna.Trial) -> float:
        family = trial.suggest_categorical("family", ["a", "b"])
        x = trial.suggest_float(f"x_{family}", 0.0, 1.0)
        return float(1.0 - 0.9 * np.exp(-5.0 * x - (family == "b")))

    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(accuracy, n_trials=14)
    return study


def test_tree_gp_sampler_defaults_to_auto_and_stays_deterministic() -> None:
    first = _accuracy_study(TreeGPSampler(seed=3, n_startup_trials=6))
    again = _accuracy_study(TreeGPSampler(seed=3, n_startup_trials=6))
    assert [t.params for t in first.trials] == [t.params for t in again.trials]
    assert first.best_value > 0.97


@pytest.mark.parametrize("options", [{"objective_bound": 1.0}, {"output_warping": "none"}])
def test_a_given_bound_or_warping_replaces_auto(options: dict) -> None:
    study = _accuracy_study(TreeGPSampler(seed=3, n_startup_trials=6, **options))
    assert len(study.trials) == 14
    with pytest.raises(ValueError, match="output_warping"):
        DNGOSampler(output_warping="log")


def test_a_failed_fit_to_the_log_error_keeps_the_values(monkeypatch) -> None:
    from condsamplers.models.fitting import NumericalError

    calls = []
    original = ExactGP.fit

    def fit_failing_on_the_second_call(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise NumericalError("not positive definite")
        return original(self, *args)

    monkeypatch.setattr(ExactGP, "fit", fit_failing_on_the_second_call)
    model, y = fit_by_evidence(ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES)
    assert np.array_equal(y, ERRORS) and model.log_evidence() is not None


def test_beyond_the_row_limit_the_values_are_fitted_alone(monkeypatch) -> None:
    import condsamplers.evidence_warping as evidence_warping

    monkeypatch.setattr(evidence_warping, "EVIDENCE_MAX_ROWS", len(X) - 1)
    _, y = fit_by_evidence(ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES)
    assert np.array_equal(y, ERRORS)
