"""``output_warping="auto"`` (condsamplers.evidence_warping): the log error where the evidence
prefers it, the values as they are where it does not."""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from condsamplers import DNGOSampler, TreeGPSampler
from condsamplers.evidence_warping import (
    WarpingChoice,
    comparison_due,
    fit_auto,
    fit_by_evidence,
    natural_bound,
)
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


# -- the comparison repeated as the study grows (fit_auto) ------------------------------------
def counting_fits(monkeypatch) -> list[np.ndarray]:
    """Record the values every ``ExactGP.fit`` is given."""
    seen: list[np.ndarray] = []
    original = ExactGP.fit

    def fit(self, X, active, y, features):
        seen.append(np.asarray(y))
        return original(self, X, active, y, features)

    monkeypatch.setattr(ExactGP, "fit", fit)
    return seen


@pytest.mark.parametrize(
    ("previous", "n", "due"),
    [
        (None, 3, True),
        (WarpingChoice(True, 10, 0.1), 10, False),
        (WarpingChoice(True, 10, 0.1), 11, True),
        (WarpingChoice(False, 40, 0.1), 43, False),
        (WarpingChoice(False, 40, 0.1), 44, True),
        (WarpingChoice(True, 25, 0.1), 27, False),
        (WarpingChoice(True, 25, 0.1), 28, True),
        (WarpingChoice(True, 2, 0.1), 3, True),
    ],
)
def test_the_fits_are_compared_again_once_the_data_grew_by_a_tenth(previous, n, due) -> None:
    assert comparison_due(previous, n, 0.1, 0.0) is due
    assert comparison_due(previous, n, 0.09, 0.0)  # the best's gap to 0 shrunk 1.11-fold
    assert comparison_due(previous, n, 0.092, 0.0) is due  # 1.087-fold: only by growth
    assert comparison_due(previous, n, 0.0, 0.0)  # the best reached the bound


def test_a_best_closer_to_the_bound_by_a_hair_does_not_call_a_comparison() -> None:
    """A smooth objective converging improves its best at every step by a hair: no
    comparison; an accuracy maximised (bound -1) counts its gap to -1."""
    previous = WarpingChoice(True, 100, 0.10001)
    assert not comparison_due(previous, 101, 0.1000001, 0.0)
    accuracy = WarpingChoice(True, 100, -0.97)  # 0.03 from a perfect score
    assert not comparison_due(accuracy, 101, -0.971, -1.0)
    assert comparison_due(accuracy, 101, -0.975, -1.0)  # 0.025: 1.2-fold closer


def test_a_changed_preference_is_compared_again_on_the_schedule_only(monkeypatch) -> None:
    seen = counting_fits(monkeypatch)
    best = float(ERRORS.min())
    due_by_growth = WarpingChoice(False, len(X) - 3, best)  # the values were preferred
    _, y, choice = fit_auto(ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES, due_by_growth)
    assert len(seen) == 2 and np.array_equal(y, log_regret(ERRORS, 0.0))
    assert choice == WarpingChoice(True, len(X), best)
    assert not comparison_due(choice, len(X), best, 0.0)  # one fit at the next step
    seen.clear()
    _, again_y, again = fit_auto(ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES, choice)
    assert len(seen) == 1 and again == choice and np.array_equal(again_y, y)


def test_between_comparisons_only_the_preferred_fit_is_made_and_it_is_the_same_fit(
    monkeypatch,
) -> None:
    compared, _ = fit_by_evidence(ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES)
    seen = counting_fits(monkeypatch)
    model, y, choice = fit_auto(ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES)
    assert len(seen) == 2 and choice == WarpingChoice(True, len(X), float(ERRORS.min()))
    seen.clear()
    previous = WarpingChoice(True, len(X) - 1, float(ERRORS.min()))
    again, y_again, kept = fit_auto(ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES, previous)
    assert len(seen) == 1 and kept == previous
    np.testing.assert_array_equal(y_again, log_regret(ERRORS, 0.0))
    grid = np.linspace(0.0, 1.0, 7)[:, None]
    on_grid = np.ones_like(grid, dtype=bool)
    for fitted in (model, again):
        mine, theirs = fitted.predict(grid, on_grid), compared.predict(grid, on_grid)
        for a, b in zip(mine, theirs, strict=True):
            np.testing.assert_allclose(a, b)


def test_a_preference_for_the_values_is_kept_between_comparisons(monkeypatch) -> None:
    seen = counting_fits(monkeypatch)
    previous = WarpingChoice(False, len(X) - 1, float(ERRORS.min()))
    _, y, kept = fit_auto(ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES, previous)
    assert len(seen) == 1 and kept == previous and np.array_equal(y, ERRORS)


def test_values_that_lose_their_bound_are_fitted_as_they_are(monkeypatch) -> None:
    seen = counting_fits(monkeypatch)
    shifted = ERRORS - 0.1  # some values negative: no bound, no log
    _, y, choice = fit_auto(
        ExactGP(seed=0), X, ACTIVE, shifted, FEATURES, WarpingChoice(True, 24, float(ERRORS.min()))
    )
    assert len(seen) == 1 and choice is None and np.array_equal(y, shifted)


def test_a_failed_log_fit_between_comparisons_keeps_the_values(monkeypatch) -> None:
    from condsamplers.models.fitting import NumericalError

    original = ExactGP.fit

    def fit_failing_on_logs(self, X, active, y, features):
        if np.all(y < 0):  # the log error of errors below 1
            raise NumericalError("not positive definite")
        return original(self, X, active, y, features)

    monkeypatch.setattr(ExactGP, "fit", fit_failing_on_logs)
    model, y, choice = fit_auto(
        ExactGP(seed=0), X, ACTIVE, ERRORS, FEATURES, WarpingChoice(True, 24, float(ERRORS.min()))
    )
    assert choice is None and np.array_equal(y, ERRORS) and model.log_evidence() is not None


def test_the_sampler_compares_the_fits_only_as_its_study_grows(monkeypatch) -> None:
    """14 trials, 6 at random: model-based steps on 6..13 observations, the fits compared on
    6, 7, 8, 9, 10, 11 and 13 (two fits each) and only the preferred one made on 12."""
    fits: list[int] = []
    original = TreeGP.fit

    def fit(self, X, active, y, features):
        fits.append(len(y))
        return original(self, X, active, y, features)

    monkeypatch.setattr(TreeGP, "fit", fit)
    _accuracy_study(TreeGPSampler(seed=3, n_startup_trials=6))
    assert fits == [6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 13, 13]
