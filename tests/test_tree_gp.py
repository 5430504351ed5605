"""The tree GP (Jenatton et al. 2017) against a brute-force joint GP with the induced kernel.

Eq. 4 of the paper: integrating out ``c`` gives ``y ~ N(b, Z Sigma_c Z^T + K_block + sigma^2 I)``.
The brute force below builds that n x n matrix in numpy from the fitted hyperparameters and
checks the model's marginal likelihood (eq. 3, computed leaf by leaf) and its posterior of
``g_p(x) + z_p^T c`` (sec. 3.2) against it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from condsamplers.models.tree_gp import TreeGP, TreeStructure
from condsamplers.models.tree_gp_structure import inner_features
from condsamplers.space import FeatureSpec

# Columns: 0 categorical root (2 choices, branching), 1 numerical shared by leaves 0 and 1,
# 2 numerical of leaf 0, 3 numerical of leaf 1, 4 categorical (3 choices) of leaf 2,
# 5 numerical shared by every leaf. Leaf 3 is a path never observed.
N_CATEGORIES = np.array([2, 0, 0, 0, 3, 0])
LEAVES = (
    frozenset({0, 1, 2, 5}),
    frozenset({0, 1, 3, 5}),
    frozenset({0, 4, 5}),
    frozenset({0, 5}),
)
FEATURES = FeatureSpec(N_CATEGORIES, leaf_patterns=LEAVES)


def test_leaf_index_maps_each_row_to_its_path() -> None:
    """Each row's leaf is the known path equal to its active pattern (``-1`` for none), in
    any row order and with the patterns repeated."""
    structure = TreeStructure.from_leaves(LEAVES, len(N_CATEGORIES))
    rng = np.random.default_rng(3)
    unknown = frozenset({0, 1})
    chosen = rng.integers(0, len(LEAVES) + 1, size=200)
    patterns = [*LEAVES, unknown]
    active = np.zeros((len(chosen), len(N_CATEGORIES)), dtype=bool)
    for i, p in enumerate(chosen):
        active[i, sorted(patterns[p])] = True
    expected = np.where(chosen == len(LEAVES), -1, chosen)
    np.testing.assert_array_equal(structure.leaf_index(active), expected)
    assert structure.leaf_index(active[:0]).shape == (0,)


def _random_rows(rng: np.random.Generator, leaves: list[int]) -> tuple[np.ndarray, np.ndarray]:
    X = np.zeros((len(leaves), len(N_CATEGORIES)))
    active = np.zeros_like(X, dtype=bool)
    for i, p in enumerate(leaves):
        for j in LEAVES[p]:
            active[i, j] = True
            k = N_CATEGORIES[j]
            X[i, j] = rng.integers(k) if k else rng.random()
        X[i, 0] = 0 if p in (0, 1) else 1
    return X, active


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X, active = _random_rows(rng, [0] * 6 + [1] * 5 + [2] * 4)
    y = np.sin(5 * X[:, 1]) + X[:, 2] ** 2 - X[:, 3] + 0.3 * X[:, 4] + X[:, 5]
    return X, active, y + 0.05 * rng.standard_normal(len(y))


def _signal_variance(model: TreeGP, leaf: int) -> float:
    """``s`` (shared) or ``s_p`` (per leaf; 1 for a pattern that is no known leaf)."""
    log_amplitude = model.params_["log_amplitude"].numpy()
    if model.signal_variance == "shared":
        return math.exp(log_amplitude[0])
    return 1.0 if leaf < 0 else math.exp(log_amplitude[leaf])


def _leaf_kernel(model: TreeGP, Xa, la, Xb, lb) -> np.ndarray:
    """Block-diagonal part: s * matern52 over the leaf's columns, 0 across leaves."""
    omega = np.exp(model.params_["log_omega"].numpy())
    K = np.zeros((len(Xa), len(Xb)))
    for i in range(len(Xa)):
        for k in range(len(Xb)):
            if la[i] != lb[k] or la[i] < 0:
                continue
            r2 = 0.0
            for j in model.structure_.leaf_columns[la[i]]:
                if N_CATEGORIES[j]:
                    r2 += omega[j] ** 2 * float(Xa[i, j] != Xb[k, j])
                else:
                    r2 += (omega[j] * (Xa[i, j] - Xb[k, j])) ** 2
            r = math.sqrt(r2)
            s = _signal_variance(model, la[i])
            K[i, k] = s * (1 + math.sqrt(5) * r + 5 / 3 * r2) * math.exp(-math.sqrt(5) * r)
    return K


def _joint_gp(model: TreeGP, X, active, X_test, active_test):
    """Brute-force eq. 4: log N(z; b, Z S Z^T + K_block + noise I) and the joint posterior."""
    to_t = torch.as_tensor
    leaf = model.structure_.leaf_index(active)
    leaf_t = model.structure_.leaf_index(active_test)
    Z = model.inner_features(to_t(X), to_t(active)).numpy()
    Zt = model.inner_features(to_t(X_test), to_t(active_test)).numpy()
    S = np.diag(model.variance_c_.numpy())
    offsets = np.append(model.params_["offsets"].numpy(), 0.0)
    if model.offsets == "shared":  # one b for every leaf, known or not
        offsets = np.full(len(model.structure_.leaves) + 1, offsets[0])
    b, bt = offsets[leaf], offsets[leaf_t]
    noise = math.exp(float(model.params_["log_noise"][0])) + model.min_noise
    K = Z @ S @ Z.T + _leaf_kernel(model, X, leaf, X, leaf) + noise * np.eye(len(X))
    z = model.z_.numpy()
    sign, logdet = np.linalg.slogdet(K)
    assert sign > 0
    resid = z - b
    log_ml = (
        -0.5 * resid @ np.linalg.solve(K, resid)
        - 0.5 * logdet
        - 0.5 * len(z) * math.log(2 * math.pi)
    )
    k_star = Zt @ S @ Z.T + _leaf_kernel(model, X_test, leaf_t, X, leaf)
    prior_var = np.einsum("ij,jk,ik->i", Zt, S, Zt) + np.array(
        [_signal_variance(model, p) for p in leaf_t]
    )
    mean = bt + k_star @ np.linalg.solve(K, resid)
    var = prior_var - np.einsum("ij,ji->i", k_star, np.linalg.solve(K, k_star.T))
    return log_ml, mean * model.y_std_ + model.y_mean_, var * model.y_std_**2


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"leaf_inputs": "leaf"},
        {"independent": True},
        {"inner_basis": "linear"},
        {"signal_variance": "leaf"},
        {"offsets": "shared"},
        {"offsets": "shared", "independent": True, "signal_variance": "leaf"},
    ],
    ids=[
        "tree-path-inputs",
        "tree-leaf-inputs",
        "independent",
        "linear-inner-basis",
        "signal-variance-per-leaf",
        "shared-offset",
        "independent-shared-offset",
    ],
)
def test_tree_gp_equals_the_joint_gp_with_the_induced_kernel(options: dict) -> None:
    X, active, y = _data()
    model = TreeGP(seed=0, max_iter=50, **options).fit(X, active, y, FEATURES)
    rng = np.random.default_rng(1)
    X_test, active_test = _random_rows(rng, [0, 0, 1, 2, 2, 3, 3])
    # A pattern that is no known leaf (column 1 without column 2 or 3): prior of its nodes.
    X_test = np.vstack([X_test, [0, 0.3, 0, 0, 0, 0.8]])
    active_test = np.vstack([active_test, [True, True, False, False, False, True]])

    log_ml, mean, var = _joint_gp(model, X, active, X_test, active_test)
    got_mean, got_var = model.predict(X_test, active_test)
    assert model.log_marginal_likelihood_ == pytest.approx(log_ml, abs=1e-8, rel=1e-8)
    np.testing.assert_allclose(got_mean, mean, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(got_var, var, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize(
    "options",
    [{}, {"independent": True}, {"inner_basis": "linear"}, {"offsets": "shared"}],
    ids=["default", "independent", "linear-inner-basis", "shared-offset"],
)
def test_mean_at_observations_is_the_prediction_at_the_training_rows(options: dict) -> None:
    """The closed form from the cached factors equals a prediction at the rows fitted, for
    the fitted model and for one conditioned on more rows (a new leaf among them)."""
    X, active, y = _data()
    model = TreeGP(seed=0, max_iter=50, min_noise=1e-2, **options).fit(X, active, y, FEATURES)
    np.testing.assert_allclose(
        model.mean_at_observations(), model.predict(X, active)[0], rtol=1e-9, atol=1e-9
    )
    X_new, active_new = _random_rows(np.random.default_rng(5), [3, 0])
    other = model.condition_on(X_new, active_new, np.array([0.4, -0.2]))
    X_all, active_all = np.vstack([X, X_new]), np.vstack([active, active_new])
    np.testing.assert_allclose(
        other.mean_at_observations(), other.predict(X_all, active_all)[0], rtol=1e-9, atol=1e-9
    )


@pytest.mark.parametrize(
    "options",
    [{}, {"leaf_inputs": "leaf"}, {"signal_variance": "leaf"}, {"offsets": "shared"}],
    ids=["default", "leaf-inputs", "signal-variance-per-leaf", "shared-offset"],
)
def test_both_forms_of_the_evidence_agree_with_their_gradients(options: dict) -> None:
    """Eq. 3 (per-leaf factors and the V x V ``Lambda_c``) and eq. 4 (one n x n factor) are
    one density: the same value and gradient away from the fitted hyperparameters too (the fit
    uses eq. 4 when there are more inner features than observations, and many of them)."""
    X, active, y = _data()
    model = TreeGP(seed=0, max_iter=20, **options).fit(X, active, y, FEATURES)
    assert model.layout_.n_features > len(y)
    rng = np.random.default_rng(3)
    params = {
        k: (v + 0.3 * torch.as_tensor(rng.standard_normal(v.shape))).requires_grad_(True)
        for k, v in model.params_.items()
    }
    values, gradients = [], []
    for form in (model._log_evidence_by_leaf, model._log_evidence_joint):
        value = form(params)
        values.append(value.item())
        gradients.append(torch.autograd.grad(value, list(params.values())))
    assert values[0] == pytest.approx(values[1], rel=1e-9)
    for by_leaf, joint in zip(*gradients, strict=True):
        np.testing.assert_allclose(by_leaf.numpy(), joint.numpy(), rtol=1e-7, atol=1e-9)


def test_structure_follows_the_paper_tree() -> None:
    structure = TreeStructure.from_leaves(LEAVES, len(N_CATEGORIES))
    root, *inner = structure.inner_nodes
    assert root.is_root and root.columns == (0, 5)
    assert [(sorted(v.leaves), v.columns) for v in inner] == [([0, 1], (1,))]
    leaf_only = TreeStructure.from_leaves(LEAVES, len(N_CATEGORIES), leaf_inputs="leaf")
    assert leaf_only.leaf_columns == ((2,), (3,), (4,), ())


def test_nested_layers_give_a_chain_of_inner_nodes() -> None:
    """units_i active iff depth >= i (columns 1..3; 0 is depth): Jenatton Fig. 3 (bottom)."""
    leaves = [frozenset({0, *range(1, depth + 1)}) for depth in range(4)]
    structure = TreeStructure.from_leaves(leaves, 4)
    assert [sorted(v.leaves) for v in structure.inner_nodes] == [
        [0, 1, 2, 3],
        [1, 2, 3],
        [2, 3],
    ]


def test_path_posterior_is_the_offset_plus_the_inner_node_terms() -> None:
    X, active, y = _data()
    model = TreeGP(seed=0, max_iter=50).fit(X, active, y, FEATURES)
    X_t, active_t = torch.as_tensor(X[:3]), torch.as_tensor(active[:3])
    mean, var = model.path_posterior(X_t, active_t)
    Z = model.inner_features(X_t, active_t)
    b = model.params_["offsets"][torch.as_tensor(model.leaf_of_[:3])]
    cov = torch.cholesky_inverse(model.L_c_)
    expected_mean = (b + Z @ model.mu_c_) * model.y_std_ + model.y_mean_
    expected_var = torch.einsum("ij,jk,ik->i", Z, cov, Z) * model.y_std_**2
    torch.testing.assert_close(mean, expected_mean)
    torch.testing.assert_close(var, expected_var)


def test_shared_information_reaches_a_leaf_with_little_data() -> None:
    """A linear trend in a shared column, learnt on leaf 0, predicts it on leaf 1 (one point)."""
    rng = np.random.default_rng(3)
    X, active = _random_rows(rng, [0] * 12 + [1])
    y = 3.0 * X[:, 1]
    tree = TreeGP(seed=0).fit(X, active, y, FEATURES)
    independent = TreeGP(seed=0, independent=True).fit(X, active, y, FEATURES)
    X_t, active_t = _random_rows(np.random.default_rng(4), [1] * 20)
    truth = 3.0 * X_t[:, 1]
    err_tree = np.abs(tree.predict(X_t, active_t)[0] - truth).mean()
    err_independent = np.abs(independent.predict(X_t, active_t)[0] - truth).mean()
    assert err_tree < 0.5 * err_independent


def test_fourier_basis_carries_a_non_linear_shared_effect_to_a_leaf_with_little_data() -> None:
    """A bump in a shared column, learnt on leaf 0, is predicted on leaf 1 (two points) by the
    Fourier inner basis (sec. 4.3) and not by the linear one (sec. 2.4)."""
    rng = np.random.default_rng(3)
    X, active = _random_rows(rng, [0] * 30 + [1] * 2)

    def bump(x: np.ndarray) -> np.ndarray:
        return np.exp(-((x - 0.5) ** 2) / 0.05)

    y = bump(X[:, 1])
    X_t, active_t = _random_rows(np.random.default_rng(4), [1] * 40)
    errors = {}
    for basis in ("linear", "fourier"):
        model = TreeGP(seed=0, inner_basis=basis).fit(X, active, y, FEATURES)
        errors[basis] = np.abs(model.predict(X_t, active_t)[0] - bump(X_t[:, 1])).mean()
    assert errors["fourier"] < 0.5 * errors["linear"]


def test_condition_on_keeps_hyperparameters_and_shrinks_variance() -> None:
    X, active, y = _data()
    model = TreeGP(seed=0, max_iter=50).fit(X, active, y, FEATURES)
    X_new, active_new = _random_rows(np.random.default_rng(5), [3])
    mean, var = model.predict(X_new, active_new)
    other = model.condition_on(X_new, active_new, mean)
    assert other.params_["log_omega"] is model.params_["log_omega"]
    assert other.predict(X_new, active_new)[1][0] < 0.1 * var[0]


@pytest.mark.parametrize("offsets", ["leaf", "shared"])
def test_condition_on_a_new_leaf_gives_it_the_prior_signal_variance(offsets: str) -> None:
    X, active, y = _data()
    model = TreeGP(seed=0, max_iter=50, signal_variance="leaf", offsets=offsets)
    model.fit(X[:11], active[:11], y[:11], FeatureSpec(N_CATEGORIES))  # leaves 0 and 1 only
    X_new, active_new = _random_rows(np.random.default_rng(5), [2])
    prior_var = model.predict(X_new, active_new)[1][0]
    other = model.condition_on(X_new, active_new, np.array([0.5]))
    assert other.n_leaves == 3 and float(other.params_["log_amplitude"][2]) == 0.0
    np.testing.assert_allclose(other.params_["log_amplitude"][:2], model.params_["log_amplitude"])
    assert other.predict(X_new, active_new)[1][0] < 0.1 * prior_var
    # The new leaf's offset: 0, its prior's mean, or the one shared offset.
    expected = [0.0] if offsets == "leaf" else []
    np.testing.assert_allclose(
        other.params_["offsets"], [*model.params_["offsets"].tolist(), *expected]
    )


def test_with_a_shared_offset_an_unseen_leaf_of_independent_gps_is_at_the_common_level() -> None:
    X, active, y = _data()
    model = TreeGP(seed=0, max_iter=50, independent=True, offsets="shared", signal_variance="leaf")
    model.fit(X[:11], active[:11], y[:11], FeatureSpec(N_CATEGORIES))  # leaves 0 and 1 only
    X_new, active_new = _random_rows(np.random.default_rng(5), [2])
    mean, var = model.predict(X_new, active_new)
    b = float(model.params_["offsets"][0]) * model.y_std_ + model.y_mean_
    assert mean[0] == pytest.approx(b, abs=1e-10)
    assert var[0] == pytest.approx(model.y_std_**2, rel=1e-10)  # prior signal variance 1


def test_tree_gp_handles_duplicates_a_single_point_and_a_constant_objective() -> None:
    X, active, _ = _data()
    X = np.vstack([X, X[:3]])
    active = np.vstack([active, active[:3]])
    mean, var = TreeGP(seed=0).fit(X, active, np.full(len(X), 2.5), FEATURES).predict(X, active)
    np.testing.assert_allclose(mean, 2.5, atol=1e-6)
    assert np.all(np.isfinite(var))
    single = TreeGP(seed=0).fit(X[:1], active[:1], np.array([1.0]), FEATURES)
    assert np.all(np.isfinite(single.predict(X, active)[0]))


def test_tree_gp_rejects_bad_options_and_bad_targets() -> None:
    with pytest.raises(ValueError, match="leaf_inputs"):
        TreeGP(leaf_inputs="nodes")
    with pytest.raises(ValueError, match="inner_basis"):
        TreeGP(inner_basis="quadratic")
    with pytest.raises(ValueError, match="signal_variance"):
        TreeGP(signal_variance="node")
    with pytest.raises(ValueError, match="offsets"):
        TreeGP(offsets="node")
    X, active, y = _data()
    y[0] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        TreeGP().fit(X, active, y, FEATURES)


@pytest.mark.parametrize(
    "options",
    [{"signal_variance": "shared"}, {"signal_variance": "leaf"}, {"offsets": "shared"}],
    ids=["shared-signal-variance", "signal-variance-per-leaf", "shared-offset"],
)
def test_warm_start_carries_over_when_a_new_leaf_and_new_inner_nodes_appear(
    options: dict,
) -> None:
    X, active, y = _data()
    options = dict(seed=0, max_iter=50, **options)
    first = TreeGP(**options).fit(X[:11], active[:11], y[:11], FeatureSpec(N_CATEGORIES))
    assert len(first.structure_.leaves) == 2
    state = first.warm_start_state()
    second = TreeGP(**options, warm_start=state).fit(X, active, y, FEATURES)
    assert len(second.structure_.leaves) == 4
    log_ml, mean, var = _joint_gp(second, X, active, X[:3], active[:3])
    assert second.log_marginal_likelihood_ == pytest.approx(log_ml, abs=1e-8, rel=1e-8)


def test_with_a_shared_offset_a_leaf_reverts_to_the_common_level_away_from_its_data() -> None:
    """Leaf 0 has many good values near 0; leaf 2 two poor ones near 3, at one corner of its
    box. Far from those two, a per-leaf offset keeps leaf 2 at its own poor level; one shared
    offset lets it revert towards the common level, with the uncertainty of its GP."""
    rng = np.random.default_rng(0)
    X, active = _random_rows(rng, [0] * 12 + [2] * 2)
    X[12:, 5] = [0.0, 0.05]
    X[12:, 4] = 0
    y = np.concatenate([0.1 * rng.standard_normal(12), [3.0, 3.1]])
    far, far_active = X[12:13].copy(), active[12:13]
    far[0, 5], far[0, 4] = 1.0, 2
    means = {}
    for offsets in ("leaf", "shared"):
        model = TreeGP(seed=0, independent=True, signal_variance="leaf", offsets=offsets)
        means[offsets] = float(model.fit(X, active, y, FEATURES).predict(far, far_active)[0][0])
    assert means["leaf"] > 1.5  # its own level, shrunk a little by the N(0, 1) prior
    assert means["shared"] < 0.5  # the common level, about the good leaf's 0


def _unseen_family_variance(n_params: int) -> float:
    """A CASH-like tree: a preprocessing choice (0; its own columns 1, 2) and an estimator
    choice (3): estimator 0 has one column (4), estimator 1 ``n_params`` (5..; every other one
    categorical). Observed: estimator 0 only. Returns the mean predicted variance at random
    configurations of estimator 1, over the variance of the data."""
    d = 5 + n_params
    n_categories = np.zeros(d, dtype=int)
    n_categories[[0, 3]] = 2
    n_categories[5::2] = 3
    family = set(range(5, d))
    leaves = tuple(
        frozenset({0, 3, 1 + p} | ({4} if e == 0 else family)) for p in (0, 1) for e in (0, 1)
    )
    rng = np.random.default_rng(0)
    X, active = np.zeros((16, d)), np.zeros((16, d), dtype=bool)
    pre = np.arange(16) % 2
    active[:, [0, 3, 4]] = True
    active[np.arange(16), 1 + pre] = True
    X[:, 0] = pre
    X[np.arange(16), 1 + pre] = rng.random(16)
    X[:, 4] = rng.random(16)
    y = np.sin(4 * X[:, 4]) + 0.3 * X[:, 0] + 0.1 * rng.standard_normal(16)
    model = TreeGP(seed=0).fit(X, active, y, FeatureSpec(n_categories, leaf_patterns=leaves))
    X_t, active_t = np.zeros((50, d)), np.zeros((50, d), dtype=bool)
    active_t[:, [0, 1, 3, *family]] = True
    X_t[:, 3] = 1
    X_t[:, 1] = rng.random(50)
    X_t[:, 5:] = rng.random((50, n_params))
    X_t[:, 5::2] = rng.integers(0, 3, X_t[:, 5::2].shape)
    return float(np.mean(model.predict(X_t, active_t)[1]) / np.var(y))


def test_the_prior_of_an_unseen_family_does_not_grow_with_its_number_of_parameters() -> None:
    """Each inner node's share of ``Sigma_c`` is scaled by its number of variance groups
    (module docstring): a family with twelve parameters is a priori no more variable than one
    with a single parameter (with one unit per group it was 2.6 times as variable, 10.7 times
    the data's variance), so EI does not favour the families with the most parameters."""
    one, twelve = _unseen_family_variance(1), _unseen_family_variance(12)
    assert twelve <= 1.2 * one
    assert twelve < 3.0


def test_cold_fit_of_many_rows_starts_from_a_subsample(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond ``COLD_FIT_ROWS`` rows a cold fit runs its starts on a subsample and refines the
    best on every row: the same optimum here as the starts run on every row."""
    import optuna

    import condsamplers.models.tree_gp as tree_gp
    from condsamplers.space import Condition, ConditionalSpace, ParamNode

    unit = optuna.distributions.FloatDistribution(0, 1)
    space = ConditionalSpace(
        [
            ParamNode("k", "k", optuna.distributions.CategoricalDistribution(["a", "b"])),
            ParamNode("xa", "xa", unit, condition=Condition("k", frozenset({0.0}))),
            ParamNode("xb", "xb", unit, condition=Condition("k", frozenset({1.0}))),
            ParamNode("s", "s", unit),
        ]
    )
    rng = np.random.default_rng(0)
    X, active = space.sample(400, rng)
    y = np.sin(6 * X[:, 1]) + np.cos(5 * X[:, 2]) + X[:, 3] ** 2 + 0.05 * rng.normal(size=400)
    X_test, active_test = space.sample(50, np.random.default_rng(1))
    fits = []
    for rows in (10**6, 150):
        monkeypatch.setattr(tree_gp, "COLD_FIT_ROWS", rows)
        calls = []
        original = tree_gp.TreeGP._subsample_optimum
        monkeypatch.setattr(
            tree_gp.TreeGP,
            "_subsample_optimum",
            lambda self, starts, f=original, c=calls: c.append(1) or f(self, starts),
        )
        model = tree_gp.TreeGP(seed=0).fit(X, active, y, space.features)
        fits.append((model, len(calls)))
    (full, full_calls), (sub, sub_calls) = fits
    assert (full_calls, sub_calls) == (0, 1)
    assert sub.log_posterior_ == pytest.approx(full.log_posterior_, abs=0.5)
    np.testing.assert_allclose(
        sub.predict(X_test, active_test)[0], full.predict(X_test, active_test)[0], atol=0.02
    )


# Two paths (column 0 selects one) sharing the numerical columns 1 and 2 at the root; columns 3
# and 4 belong to one path each.
_TWO_PATHS = (frozenset({0, 1, 2, 3}), frozenset({0, 1, 2, 4}))
_TWO_PATHS_FEATURES = FeatureSpec(np.array([2, 0, 0, 0, 0]), leaf_patterns=_TWO_PATHS)


def _two_path_rows(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    X = rng.random((n, 5))
    X[:, 0] = np.arange(n) % 2
    active = np.zeros_like(X, dtype=bool)
    for i in range(n):
        active[i, list(_TWO_PATHS[int(X[i, 0])])] = True
    return X, active


def test_fourier_features_of_a_node_are_a_sum_of_one_column_functions() -> None:
    """sec. 4.3, made additive: moving one shared column changes only that column's features,
    and each numerical column's features form a variance group of their own (no linear terms)."""
    X, active = _two_path_rows(np.random.default_rng(0), 6)
    model = TreeGP(seed=0, max_iter=20).fit(X, active, X[:, 1], _TWO_PATHS_FEATURES)
    keys = model.layout_.group_keys
    root = tuple(sorted(model.structure_.inner_nodes[0].leaves))
    assert (root, "fourier 1") in keys and (root, "fourier 2") in keys
    assert (root, 1) not in keys and (root, 2) not in keys
    moved = X.copy()
    moved[:, 1] = 1.0 - moved[:, 1]
    X_t, moved_t, active_t = (torch.as_tensor(a) for a in (X, moved, active))
    changed = model.inner_features(X_t, active_t) != model.inner_features(moved_t, active_t)
    group = model.layout_.groups[changed.any(dim=0).numpy()]
    assert set(group.tolist()) == {keys.index((root, "fourier 1"))}


def test_a_shared_column_whose_effect_differs_by_path_gets_less_shared_variance() -> None:
    """Column 2's effect is the same bump on both paths, column 1's is opposite: the fitted
    variance of the root's features of column 1 is the smaller one, so the leaf GPs carry it."""
    X, active = _two_path_rows(np.random.default_rng(1), 40)
    sign = np.where(X[:, 0] == 0, 1.0, -1.0)
    y = np.exp(-((X[:, 2] - 0.5) ** 2) / 0.05) + sign * np.sin(4.0 * X[:, 1])
    model = TreeGP(seed=0).fit(X, active, y, _TWO_PATHS_FEATURES)
    keys = model.layout_.group_keys
    root = tuple(sorted(model.structure_.inner_nodes[0].leaves))
    variance = model.params_["log_variance_c"].exp()
    assert variance[keys.index((root, "fourier 1"))] < variance[keys.index((root, "fourier 2"))]


@pytest.mark.parametrize("basis", ["fourier", "linear"])
def test_the_feature_recipe_builds_the_same_inner_features_as_node_by_node(basis: str) -> None:
    """``z(x)`` from the layout's recipe (prediction) equals the node-by-node construction
    (the fit's, with its cache), values and gradient in ``x``, on every node and on some."""
    X, active, y = _data()
    model = TreeGP(seed=0, max_iter=5, inner_basis=basis).fit(X, active, y, FEATURES)
    rows, rows_active = _random_rows(np.random.default_rng(1), [0, 1, 2, 3, 2, 0])
    log_lengthscales = model.params_.get("log_fourier_lengthscale")
    n_nodes = len(model.structure_.inner_nodes)
    for nodes in (None, tuple(range(n_nodes))[1:], (0,)):
        built = []
        for layout in (None, model.layout_):
            x = torch.tensor(rows, requires_grad=True)
            z = inner_features(
                model.structure_,
                FEATURES,
                x,
                torch.as_tensor(rows_active),
                model.fourier_,
                log_lengthscales,
                nodes=nodes,
                layout=layout,
            )
            torch.sin(z).sum().backward()
            built.append((z.detach(), x.grad))
        (z_nodes, grad_nodes), (z_recipe, grad_recipe) = built
        assert torch.equal(z_nodes, z_recipe)
        assert torch.equal(grad_nodes, grad_recipe)
