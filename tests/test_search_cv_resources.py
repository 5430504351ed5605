"""``CondBayesSearchCV(resource=...)``: candidates cross-validated on a growing resource and
stopped by successive halving, as ``HalvingRandomSearchCV``; the ladder's arithmetic, the
subsampling splitter, ``cv_results_``, the study's PRUNED trials and the choice of the best."""

from __future__ import annotations

import numpy as np
import pytest
from optuna.trial import TrialState
from scipy.stats import loguniform, randint
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from condsamplers import TreeGPSampler
from condsamplers.sklearn import CondBayesSearchCV
from condsamplers.sklearn.resources import (
    SubsampledSplits,
    bracket_budgets,
    bracket_sequence,
    check_resource,
    is_promoted,
    resource_ladder,
)

PIPE = Pipeline([("scaler", StandardScaler()), ("clf", LogisticRegression())])
SPACE = [
    {"clf": [LogisticRegression()], "clf__C": loguniform(1e-3, 1e2)},
    {"clf": [KNeighborsClassifier()], "clf__n_neighbors": randint(1, 15)},
]


def data(n: int = 240) -> tuple[np.ndarray, np.ndarray]:
    return make_classification(
        n_samples=n, n_features=8, n_informative=5, n_classes=2, random_state=0
    )


def fast_sampler(seed: int = 0) -> TreeGPSampler:
    return TreeGPSampler(
        seed=seed, n_candidates=64, n_local_search=2, n_restarts=0, n_startup_trials=4
    )


# -- the ladder ------------------------------------------------------------------------------
def test_ladder_counts_down_from_the_full_amount_by_factor() -> None:
    ladder = resource_ladder(
        "n_samples", "smallest", "auto", 3, n_samples=1797, n_splits=3, n_classes=10
    )
    # "smallest": 2 * 3 splits * 10 classes = 60; 1797 // 3**k at or above 60.
    assert ladder.rungs == (66, 199, 599, 1797)
    named = resource_ladder("max_iter", 4, 100, 2, n_samples=50, n_splits=3, n_classes=None)
    assert named.rungs == (6, 12, 25, 50, 100)
    assert resource_ladder("max_iter", 7, 7, 3, n_samples=1, n_splits=3, n_classes=None).rungs == (
        7,
    )


def test_brackets_weigh_as_hyperband_and_interleave() -> None:
    # Li et al. 2018 alg. 1 with B = 4 brackets, factor 3: ceil(4 * 3**s / (s + 1)).
    assert bracket_budgets(4, 3) == [27, 12, 6, 4]
    cycle = bracket_sequence(4, 3)
    assert [cycle.count(b) for b in range(4)] == [27, 12, 6, 4]
    assert cycle[0] == 0 and 3 in cycle[:10]  # a full evaluation early in every cycle
    assert bracket_sequence(1, 3) == (0,)


def test_promotion_keeps_the_best_share_of_a_rung() -> None:
    assert is_promoted(0.5, [0.5], 3)  # alone: the best so far goes on
    assert not is_promoted(0.4, [0.5, 0.4], 3)
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]  # 6 // 3 = 2 go on
    assert is_promoted(0.8, scores, 3) and not is_promoted(0.7, scores, 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"factor": 1}, "factor must be an integer >= 2"),
        ({"factor": 2.5}, "factor must be an integer >= 2"),
        ({"resource": "max_iter"}, "max_resources='auto' is the number of samples"),
        ({"max_resources": 500}, "exceeds the 300 samples"),
        ({"min_resources": 400, "max_resources": 300}, "is above max_resources=300"),
        ({"min_resources": 0}, "min_resources must be a positive int"),
    ],
)
def test_bad_ladders_are_refused_naming_the_option(kwargs: dict, message: str) -> None:
    options = {"resource": "n_samples", "min_resources": "smallest", "max_resources": "auto"}
    options["factor"] = 3
    options.update(kwargs)
    with pytest.raises(ValueError, match=message):
        resource_ladder(**options, n_samples=300, n_splits=3, n_classes=2)


def test_the_resource_must_be_an_unsearched_estimator_parameter() -> None:
    params = PIPE.get_params()
    check_resource("n_samples", params, {"clf__C"})
    check_resource("clf__max_iter", params, {"clf__C"})
    with pytest.raises(ValueError, match="'epochs' is not a parameter of the estimator"):
        check_resource("epochs", params, set())
    with pytest.raises(ValueError, match="'clf__C' is also in search_spaces"):
        check_resource("clf__C", params, {"clf__C"})


# -- the subsampling splitter ----------------------------------------------------------------
def test_subsampled_splits_shrink_the_training_part_only_stratified_and_repeatable() -> None:
    X, y = data(300)
    base = StratifiedKFold(3)
    splits = SubsampledSplits(base, 0.2, seed=5, stratify=True)
    assert splits.get_n_splits(X, y) == 3
    full = list(base.split(X, y))
    first, again = list(splits.split(X, y)), list(splits.split(X, y))
    for (train, test), (train_full, test_full), (train_again, _) in zip(
        first, full, again, strict=True
    ):
        assert len(train) == round(0.2 * len(train_full))
        assert set(train) <= set(train_full)
        np.testing.assert_array_equal(test, test_full)
        np.testing.assert_array_equal(train, train_again)
        share = y[train].mean()
        assert abs(share - y[train_full].mean()) < 0.03  # stratified
    whole = list(SubsampledSplits(KFold(3), 1.0, seed=0, stratify=False).split(X, y))
    assert all(len(a) == len(b) for (a, _), (b, _) in zip(whole, full, strict=True))


# -- the search ------------------------------------------------------------------------------
def search(**kwargs) -> CondBayesSearchCV:
    X, y = data()
    options = dict(n_iter=14, cv=3, random_state=0, sampler=fast_sampler(), resource="n_samples")
    return CondBayesSearchCV(PIPE, SPACE, **{**options, **kwargs}).fit(X, y)


def test_n_samples_resource_climbs_the_ladder_in_brackets_and_prunes_candidates() -> None:
    s = search(min_resources=20)
    results = s.cv_results_
    rungs = sorted(set(results["n_resources"]))
    assert rungs == [26, 80, 240]  # 240 // 3**k at or above 20
    iters = [rungs.index(r) for r in results["n_resources"]]
    assert np.array_equal(np.asarray(results["iter"]), iters)
    trials = [t for t in s.study_.trials if "cv_results_index" in t.user_attrs]
    assert len(trials) == 14
    states = {t.state for t in trials}
    assert TrialState.PRUNED in states and TrialState.COMPLETE in states
    starts = bracket_sequence(3, 3)[:14]
    for trial, start in zip(trials, starts, strict=True):
        index = trial.user_attrs["cv_results_index"]
        steps = sorted(trial.intermediate_values)
        # Consecutive rungs from its bracket's first; the last rung's score is the value.
        assert steps == rungs[start : start + len(steps)]
        assert trial.value == pytest.approx(results["mean_test_score"][index])
        if trial.state == TrialState.PRUNED:
            assert results["n_resources"][index] == steps[-1] < 240
        else:
            assert results["n_resources"][index] == 240
    # The first rung: the candidates of bracket 0 only; the last: the complete ones.
    assert iters.count(0) == starts.count(0)
    assert iters.count(2) == sum(t.state == TrialState.COMPLETE for t in trials)


def test_best_is_chosen_among_the_candidates_trained_on_every_sample() -> None:
    s = search(min_resources=20)
    results = s.cv_results_
    full = np.flatnonzero(np.asarray(results["n_resources"]) == 240)
    assert s.best_index_ in full
    assert s.best_score_ == pytest.approx(np.max(results["mean_test_score"][full]))
    assert s.best_params_ == results["params"][s.best_index_]
    assert s.best_estimator_.score(*data()) > 0.5


def test_the_sampler_learns_from_pruned_candidates_and_the_search_repeats() -> None:
    first, second = search(min_resources=20), search(min_resources=20)
    assert first.cv_results_["params"] == second.cv_results_["params"]
    model_based = [t for t in first.study_.trials if "condsamplers:proposal" in t.system_attrs]
    # 4 random startup trials (pruned ones count), then model-based proposals.
    assert len(model_based) >= 14 - 4


def test_a_parameter_resource_sets_the_parameter_to_each_rung() -> None:
    X, y = data()
    space = {"alpha": loguniform(1e-6, 1e-1), "penalty": ["l2", "l1"]}
    s = CondBayesSearchCV(
        SGDClassifier(tol=None, random_state=0),
        space,
        n_iter=9,
        cv=3,
        random_state=0,
        sampler=fast_sampler(),
        resource="max_iter",
        max_resources=27,
        factor=3,
    )
    s.fit(X, y)
    results = s.cv_results_
    assert sorted(set(results["n_resources"])) == [1, 3, 9, 27]
    for params, amount in zip(results["params"], results["n_resources"], strict=True):
        assert params["max_iter"] == amount
    assert s.best_params_["max_iter"] == 27
    assert s.best_estimator_.max_iter == 27


def test_resource_options_are_checked_when_fit_starts() -> None:
    X, y = data()
    with pytest.raises(ValueError, match="'epochs' is not a parameter"):
        CondBayesSearchCV(PIPE, SPACE, n_iter=3, resource="epochs").fit(X, y)
    with pytest.raises(ValueError, match="factor"):
        CondBayesSearchCV(PIPE, SPACE, n_iter=3, resource="n_samples", factor=1).fit(X, y)
    with pytest.raises(ValueError, match="max_resources='auto'"):
        CondBayesSearchCV(PIPE, SPACE, n_iter=3, resource="clf__max_iter").fit(X, y)


def test_a_candidate_that_fails_on_a_rung_stops_there_told_as_the_worst_score() -> None:
    """k-NN with more neighbours than the 5 training samples of the first rung fails there:
    its ``NaN`` score ends the candidate, told as the worst finite score (as without a
    resource), not reported as a rung's value."""
    X, y = data()
    space = {"n_neighbors": randint(1, 15)}
    with pytest.warns(UserWarning):
        s = CondBayesSearchCV(
            KNeighborsClassifier(), space, n_iter=8, cv=3, random_state=0,
            sampler=fast_sampler(), resource="n_samples", min_resources=6,
        ).fit(X, y)  # fmt: skip
    failed = [t for t in s.study_.trials if t.user_attrs.get("cv_failed")]
    assert failed, "no candidate failed on the first rung"
    for trial in failed:
        index = trial.user_attrs["cv_results_index"]
        assert np.isnan(s.cv_results_["mean_test_score"][index])
        assert trial.params["n_neighbors"] > 5 and not trial.intermediate_values
        if trial.state == TrialState.COMPLETE:  # one job: the trials before it were told
            told = s.study_.trials[: trial.number]
            assert trial.value == min(t.value for t in told if t.state == TrialState.COMPLETE)
