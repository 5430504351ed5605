"""Sobol' sensitivity analysis of the fitted GP (Zhang et al. sec. 4.2): estimator, evaluator,
curves and plots."""

from __future__ import annotations

import math
import sys

import numpy as np
import optuna
import pytest

from condsamplers.importance import (
    SobolImportanceEvaluator,
    _sobol_from_function,
    sobol_indices,
)
from condsamplers.kernels import KERNELS

optuna.logging.set_verbosity(optuna.logging.WARNING)


# -- the estimator on known functions of independent U[0, 1) inputs ---------------------------


def _indices(f, groups, n_latent, n_samples=4096, seed=0):
    est = _sobol_from_function(f, groups, n_latent, n_samples, np.random.default_rng(seed))
    main = {k: v / est.variance for k, v in est.main.items()}
    total = {k: v / est.variance for k, v in est.total.items()}
    pure = {k: (v - est.main[k[0]] - est.main[k[1]]) / est.variance for k, v in est.closed.items()}
    return est, main, total, pure


def test_estimator_matches_closed_form_of_additive_function():
    a, b = 2.0, 3.0
    var_1, var_2 = a**2 / 12.0, b**2 * (1.0 / 5.0 - 1.0 / 9.0)  # Var(a u), Var(b u^2)
    est, main, total, pure = _indices(
        lambda u: a * u[:, 0] + b * u[:, 1] ** 2, {"u1": [0], "u2": [1], "u3": [2]}, 3
    )
    assert est.variance == pytest.approx(var_1 + var_2, rel=0.02)
    assert main["u1"] == pytest.approx(var_1 / (var_1 + var_2), abs=0.01)
    assert main["u2"] == pytest.approx(var_2 / (var_1 + var_2), abs=0.01)
    assert main["u3"] == pytest.approx(0.0, abs=1e-12)  # f ignores u3: exactly 0
    assert total["u1"] == pytest.approx(main["u1"], abs=0.01)
    assert all(abs(v) < 0.01 for v in pure.values())


def test_estimator_finds_product_interaction():
    # f = u1 u2: Var f = 1/9 - 1/16 = 7/144, V_1 = V_2 = Var(u/2) = 1/48, V_12 = 7/144 - 2/48.
    _, main, total, pure = _indices(lambda u: u[:, 0] * u[:, 1], {"u1": [0], "u2": [1]}, 2)
    assert main["u1"] == pytest.approx(3.0 / 7.0, abs=0.02)
    assert main["u2"] == pytest.approx(3.0 / 7.0, abs=0.02)
    assert pure[("u1", "u2")] == pytest.approx(1.0 / 7.0, abs=0.02)
    assert total["u1"] == pytest.approx(4.0 / 7.0, abs=0.02)


def test_estimator_treats_a_group_of_columns_as_one_input():
    _, main, _, _ = _indices(lambda u: u.sum(axis=1), {"pair": [0, 1], "single": [2]}, 3)
    assert main["pair"] == pytest.approx(2.0 / 3.0, abs=0.01)
    assert main["single"] == pytest.approx(1.0 / 3.0, abs=0.01)


# -- studies ---------------------------------------------------------------------------------


def _study(objective, n_trials, direction="minimize", seed=0):
    study = optuna.create_study(
        direction=direction, sampler=optuna.samplers.RandomSampler(seed=seed)
    )
    study.optimize(objective, n_trials=n_trials)
    return study


def _additive(trial):
    x1, x2 = trial.suggest_float("x1", 0.0, 1.0), trial.suggest_float("x2", 0.0, 1.0)
    return 3.0 * x1 + 2.0 * x2**2


def _product(trial):
    return trial.suggest_float("x1", 0.0, 1.0) * trial.suggest_float("x2", 0.0, 1.0)


V_RANGE = {1: (1, 3), 2: (1, 2)}


def _branching_nested(trial):
    """Zhang et al. eq. 7 (maximised); nested ``v`` with a branch-dependent range."""
    x1 = trial.suggest_float("x1", -10.0, 10.0)
    x2 = trial.suggest_float("x2", -5.0, 5.0)
    z = trial.suggest_categorical("z", [1, 2])
    v = trial.suggest_int("v", *V_RANGE[z])
    c1, c2 = (3.0 - 0.5 * v, 5.0 - v) if z == 1 else (-1.0 + v, 7.0 - v)
    return (
        v / 2.0 * math.exp(-((x1 - c1) ** 2))
        + 2.0 / v * math.exp(-((x1 - c2) ** 2) / 10.0)
        + 1.0 / (x2**2 + 1.0)
        + z
    )


def _switch(trial):
    """``f = 10 x`` on branch ``a`` (``x`` nested there), 0 on branch ``b``."""
    if trial.suggest_categorical("z", ["a", "b"]) == "a":
        return 10.0 * trial.suggest_float("x", 0.0, 1.0)
    return 0.0


@pytest.fixture(scope="module")
def bn_study():
    return _study(_branching_nested, 80, direction="maximize")


@pytest.fixture(scope="module")
def bn_result(bn_study):
    return sobol_indices(bn_study, n_samples=1024, seed=0)


def test_gp_indices_match_closed_form_on_additive_study():
    # Var(3 x1) = 9/12, Var(2 x2^2) = 4 * 4/45; the GP fits this smooth function almost exactly.
    var_1, var_2 = 9.0 / 12.0, 16.0 / 45.0
    result = sobol_indices(_study(_additive, 40), n_samples=2048, seed=0)
    assert result.main_effects["x1"] == pytest.approx(var_1 / (var_1 + var_2), abs=0.03)
    assert result.main_effects["x2"] == pytest.approx(var_2 / (var_1 + var_2), abs=0.03)
    assert result.variance == pytest.approx(var_1 + var_2, rel=0.05)
    assert result.interaction("x1", "x2") < 0.02


def test_gp_finds_product_interaction():
    result = sobol_indices(_study(_product, 40), n_samples=2048, seed=0)
    assert result.interaction("x2", "x1") == pytest.approx(1.0 / 7.0, abs=0.04)


def test_nested_parameter_is_diluted_and_branch_switches_its_subtree():
    # f = 10 x 1[z = a], P(z = a) = 1/2: Var f = 50/3 - 25/4, V_x = Var(5 x) = 25/12,
    # V_z = Var(5 1[z = a]) = 25/4, so S_x = 0.2, S_z = 0.6, S_xz = 0.2.
    # The arc kernel's Matern fits the nested line 10 x near-exactly from 20 points; the
    # default B&N kernel's exponential correlation for a nested quantitative column (Zhang et
    # al., Definition 1) is rougher (its curve is off by up to 0.9 at the ends with 20 points).
    result = sobol_indices(_study(_switch, 40), kernel="arc", n_samples=2048, seed=0)
    assert result.main_effects["x"] == pytest.approx(0.2, abs=0.04)
    assert result.main_effects["z"] == pytest.approx(0.6, abs=0.04)
    assert result.interaction("x", "z") == pytest.approx(0.2, abs=0.04)
    (curve,) = result.main_effect_curves("x")  # conditioned on x active: E[f | x = t] = 10 t
    np.testing.assert_allclose(curve.mean, 10.0 * curve.positions, atol=0.3)


def test_evaluator_ranks_bn_parameters_and_sees_nested_v(bn_study):
    importances = optuna.importance.get_param_importances(
        bn_study, evaluator=SobolImportanceEvaluator(n_samples=1024, seed=0)
    )
    assert set(importances) == {"x1", "x2", "z", "v"}
    assert sum(importances.values()) == pytest.approx(1.0)
    assert list(importances.values()) == sorted(importances.values(), reverse=True)
    assert importances["x1"] > importances["x2"]
    fanova = optuna.importance.get_param_importances(
        bn_study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0)
    )
    assert "v" not in fanova  # the intersection search space has no nested v


def test_bn_indices_are_close_to_those_of_the_true_function(bn_result):
    # Indices of eq. 7 itself under the latent distribution (2^16-point estimate with the true
    # function): S = x1 0.316, x2 0.113, z 0.379, v 0.009; T_v = 0.111; S_{x1,z} = 0.080.
    # v matters through its interactions (with x1: the centres c1, c2 move with v).
    assert bn_result.main_effects["x1"] == pytest.approx(0.316, abs=0.08)
    assert bn_result.main_effects["z"] == pytest.approx(0.379, abs=0.08)
    assert bn_result.main_effects["x1"] > bn_result.main_effects["x2"]
    assert bn_result.total_effects["v"] > 0.03
    assert bn_result.interaction("z", "x1") == pytest.approx(0.080, abs=0.05)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_every_kernel_can_be_analysed(bn_study, kernel):
    importances = SobolImportanceEvaluator(kernel=kernel, n_samples=512, seed=0).evaluate(bn_study)
    assert set(importances) == {"x1", "x2", "z", "v"}
    assert importances["x1"] > importances["x2"]


def test_params_subset_gives_the_same_indices(bn_study, bn_result):
    evaluator = SobolImportanceEvaluator(n_samples=1024, seed=0)
    subset = evaluator.evaluate(bn_study, params=["v", "x1"])
    assert list(subset) == ["x1", "v"]  # largest first
    for name in subset:
        assert subset[name] == pytest.approx(bn_result.main_effects[name], abs=1e-12)
    assert evaluator.evaluate(bn_study, params=[]) == {}


def test_without_interactions_only_main_and_total_effects_are_estimated(bn_study, bn_result):
    """What ``SobolImportanceEvaluator.evaluate`` computes: the main effects of the full
    analysis, from ``(2 + p) N`` rows instead of ``(2 + p + p(p-1)/2) N``."""
    alone = sobol_indices(bn_study, n_samples=1024, seed=0, interactions=False)
    assert alone.interactions == {} and bn_result.interactions
    for name, value in bn_result.main_effects.items():
        assert alone.main_effects[name] == pytest.approx(value, abs=1e-12)
        assert alone.total_effects[name] == pytest.approx(bn_result.total_effects[name], abs=1e-12)


def test_same_seed_same_result(bn_study):
    first = SobolImportanceEvaluator(n_samples=512, seed=7).evaluate(bn_study)
    second = SobolImportanceEvaluator(n_samples=512, seed=7).evaluate(bn_study)
    assert first == second


def test_maximised_objective_curves_keep_the_objective_sign():
    def objective(trial):
        return 2.0 * trial.suggest_float("x", 0.0, 1.0) + 1.0

    result = sobol_indices(_study(objective, 20, direction="maximize"), n_samples=256, seed=0)
    assert result.sign == -1.0
    (curve,) = result.main_effect_curves("x")
    np.testing.assert_allclose(curve.mean, 2.0 * curve.positions + 1.0, atol=0.05)
    assert result.main_effects["x"] == pytest.approx(1.0, abs=0.01)


def test_nan_values_are_skipped_and_infinite_ones_clipped():
    study = _study(_additive, 30)
    numbers = [t.number for t in study.trials]
    nan_target = sobol_indices(
        study,
        n_samples=256,
        seed=0,
        target=lambda t: math.nan if t.number == numbers[0] else t.value,
    )
    assert nan_target.n_trials == 29
    inf_target = sobol_indices(
        study,
        n_samples=256,
        seed=0,
        target=lambda t: math.inf if t.number == numbers[0] else t.value,
    )
    assert inf_target.n_trials == 30
    assert all(np.isfinite(v) for v in inf_target.main_effects.values())


# -- errors ----------------------------------------------------------------------------------


def test_errors_name_the_problem_and_the_fix(bn_study):
    evaluator = SobolImportanceEvaluator(n_samples=256, seed=0)
    with pytest.raises(ValueError, match="no COMPLETE trials"):
        evaluator.evaluate(optuna.create_study())
    with pytest.raises(ValueError, match="at least 2"):
        evaluator.evaluate(_study(_additive, 1))
    with pytest.raises(ValueError, match=r"'learning_rate'.*params=None"):
        evaluator.evaluate(bn_study, params=["x1", "learning_rate"])
    multi = optuna.create_study(directions=["minimize", "minimize"])
    multi.optimize(lambda t: (t.suggest_float("x", 0, 1), 1.0), n_trials=5)
    with pytest.raises(ValueError, match="target"):
        evaluator.evaluate(multi)
    assert set(evaluator.evaluate(multi, target=lambda t: t.values[0])) == {"x"}
    with pytest.raises(ValueError, match="'arc'"):
        SobolImportanceEvaluator(kernel="rbf")
    with pytest.raises(ValueError, match="n_samples"):
        SobolImportanceEvaluator(n_samples=1)


# -- plots -----------------------------------------------------------------------------------


@pytest.fixture
def pyplot():
    """matplotlib is an optional dependency (``condsamplers[plot]``): skip without it."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_plots_without_matplotlib_say_how_to_install_it(bn_result, monkeypatch):
    from condsamplers.visualization import plot_main_effects

    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install condsamplers\[plot\]"):
        plot_main_effects(bn_result)


def test_main_effect_plot_has_one_panel_per_parameter_and_one_line_per_variant(bn_result, pyplot):
    from condsamplers.visualization import plot_main_effects

    axes = plot_main_effects(bn_result)
    assert isinstance(axes, np.ndarray) and axes.ndim == 1  # as Optuna's multi-panel plots
    assert [ax.get_xlabel() for ax in axes] == sorted(
        bn_result.names, key=lambda n: -bn_result.main_effects[n]
    )
    lines = {ax.get_xlabel(): len(ax.get_lines()) for ax in axes}
    assert lines == {"x1": 1, "x2": 1, "z": 1, "v": 2}  # v: one range per branch of z
    (ax,) = plot_main_effects(bn_result, params=["x2"])
    assert len(ax.get_lines()[0].get_xdata()) > 10


def test_interaction_plot_has_one_line_per_value_of_the_second_parameter(bn_result, pyplot):
    from condsamplers.visualization import plot_interaction

    assert len(plot_interaction(bn_result, "x1", "x2", n_curves=3).get_lines()) == 3
    assert len(plot_interaction(bn_result, "x1", "z").get_lines()) == 2
    # v in 1..3 under z = 1 and 1..2 under z = 2: five (value, branch) curves.
    assert len(plot_interaction(bn_result, "x1", "v").get_lines()) == 5
    # z is v's parent: each curve v = s exists only at the z that activates that v variant.
    lines = plot_interaction(bn_result, "z", "v").get_lines()
    assert [int(np.isfinite(line.get_ydata()).sum()) for line in lines] == [1] * 5
    with pytest.raises(ValueError, match="'w'"):
        plot_interaction(bn_result, "x1", "w")
