"""``CondBayesSearchCV(pareto_objectives=...)``: a search for the Pareto front of several
scores and times; the study's directions and values, ``pareto_front_``, ``best_*`` as
scikit-learn's, and the errors of bad objective lists."""

from __future__ import annotations

import numpy as np
import pytest
from optuna.study import StudyDirection
from optuna.trial import TrialState
from scipy.stats import loguniform, randint
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from condsamplers import TreeGPSampler
from condsamplers.samplers.proposals import read_proposal
from condsamplers.sklearn import CondBayesSearchCV

PIPE = Pipeline([("scaler", StandardScaler()), ("clf", LogisticRegression())])
SPACE = [
    {"clf": [LogisticRegression()], "clf__C": loguniform(1e-3, 1e2)},
    {"clf": [KNeighborsClassifier()], "clf__n_neighbors": randint(1, 15)},
]
SCORING = {"acc": "accuracy", "ll": "neg_log_loss"}


def data() -> tuple[np.ndarray, np.ndarray]:
    return make_classification(n_samples=150, n_features=6, n_informative=4, random_state=0)


def search(**kwargs) -> CondBayesSearchCV:
    options = dict(n_iter=10, cv=3, random_state=0, scoring=SCORING, refit="acc")
    options["pareto_objectives"] = ["acc", "fit_time"]
    return CondBayesSearchCV(PIPE, SPACE, **{**options, **kwargs}).fit(*data())


def test_the_study_has_one_direction_and_value_per_objective() -> None:
    s = search()
    assert s.study_.directions == [StudyDirection.MAXIMIZE, StudyDirection.MINIMIZE]
    results = s.cv_results_
    for trial in s.study_.get_trials(states=(TrialState.COMPLETE,)):
        row = trial.user_attrs["cv_results_index"]
        assert trial.values == pytest.approx(
            [results["mean_test_acc"][row], results["mean_fit_time"][row]]
        )


def test_pareto_front_lists_the_non_dominated_rows_and_best_follows_refit() -> None:
    s = search()
    results = s.cv_results_
    acc, seconds = np.asarray(results["mean_test_acc"]), np.asarray(results["mean_fit_time"])
    front = set(s.pareto_front_.tolist())
    points = np.column_stack([-acc, seconds])  # both minimised
    for i, p in enumerate(points):
        dominated = np.any(np.all(points <= p, axis=1) & np.any(points < p, axis=1))
        if dominated:
            assert i not in front
        else:  # on the front, itself or an identical earlier row
            assert any(np.array_equal(points[j], p) for j in front)
    assert s.best_index_ == int(np.argmax(acc))  # refit="acc", as scikit-learn
    assert acc[sorted(front)].max() == acc.max()  # the most accurate row is on the front


def test_two_scores_with_a_given_sampler_and_model_based_proposals() -> None:
    sampler = TreeGPSampler(seed=0, n_startup_trials=4, n_candidates=64, n_local_search=2)
    s = search(pareto_objectives=["acc", "ll"], sampler=sampler)
    assert s.study_.directions == [StudyDirection.MAXIMIZE] * 2
    assert sum(read_proposal(t) is not None for t in s.study_.trials) == 10 - 4


@pytest.mark.parametrize(
    ("objectives", "extra", "message"),
    [
        (["acc"], {}, "at least two distinct names"),
        ("acc", {}, "pareto_objectives"),
        (["acc", "acc"], {}, "at least two distinct names"),
        (["acc", "recall"], {}, "'recall', which is neither a scorer"),
        (["acc", "fit_time"], {"resource": "n_samples"}, "does not combine with resource"),
    ],
)
def test_bad_objective_lists_are_refused_naming_the_option(objectives, extra, message) -> None:
    with pytest.raises(ValueError, match=message):
        search(pareto_objectives=objectives, **extra)
