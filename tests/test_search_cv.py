"""``CondBayesSearchCV``: scikit-learn conformance, drop-in behaviour against
``RandomizedSearchCV``, batches for ``n_jobs``, and search-space validation."""

from __future__ import annotations

import warnings

import numpy as np
import optuna
import pytest
from conftest import with_stable_ids
from optuna.distributions import FloatDistribution, IntDistribution
from optuna.trial import TrialState
from scipy.stats import expon, loguniform, randint, uniform
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import RandomizedSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from condsamplers import TreeGPSampler
from condsamplers.sklearn import CondBayesSearchCV, SearchSpaceError
from condsamplers.sklearn.search import (
    BRANCH_PARAM,
    DEFAULT_SAMPLER_OPTIONS,
    MANY_DICTS,
    MANY_DICTS_LOCAL_SEARCH_RADIUS,
    MANY_DICTS_PATIENCE,
    default_sampler_options,
    translate_search_spaces,
)


def fast_sampler(seed: int = 0, **kwargs) -> TreeGPSampler:
    settings = dict(n_candidates=64, n_local_search=2, n_restarts=0, n_startup_trials=3)
    return TreeGPSampler(seed=seed, **{**settings, **kwargs})


def data(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return make_classification(
        n_samples=n, n_features=6, n_informative=4, n_classes=2, random_state=seed
    )


PIPE = Pipeline([("scaler", StandardScaler()), ("clf", SVC())])
#: Three branches; ``clf__C`` is in two of them (a parameter of each, not a shared one).
SPACE = [
    {"clf": [SVC()], "clf__C": loguniform(1e-2, 1e2), "clf__gamma": loguniform(1e-3, 1e1)},
    {"scaler": [StandardScaler(), MinMaxScaler()], "clf": [LogisticRegression()],
     "clf__C": loguniform(1e-3, 1e2)},
    {"clf": [KNeighborsClassifier()], "clf__n_neighbors": randint(1, 10),
     "clf__weights": ["uniform", "distance"]},
]  # fmt: skip


# -- scikit-learn conformance ----------------------------------------------------------------
EXPECTED_FAILED = {
    # scikit-learn declares these two for its own GridSearchCV / RandomizedSearchCV
    # (sklearn/utils/_test_common/instance_generator.py, PER_ESTIMATOR_XFAIL_CHECKS).
    "check_supervised_y_2d": "DataConversionWarning not caught",
    "check_requires_y_none": "Doesn't fail gracefully",
}


@with_stable_ids(
    parametrize_with_checks(
        [
            CondBayesSearchCV(
                Ridge(), {"alpha": [0.1, 1.0]}, n_iter=2, cv=2, error_score="raise", random_state=0
            ),
            CondBayesSearchCV(
                LogisticRegression(),
                {"C": loguniform(0.1, 10.0)},
                n_iter=4,
                sampler=fast_sampler(n_startup_trials=2),
                cv=2,
                error_score="raise",
            ),
            CondBayesSearchCV(
                Pipeline([("pca", PCA()), ("ridge", Ridge())]),
                {"ridge__alpha": (0.1, 1.0, "log-uniform")},
                n_iter=2,
                cv=2,
                error_score="raise",
                random_state=0,
            ),
            CondBayesSearchCV(
                Pipeline([("scaler", StandardScaler()), ("clf", LogisticRegression())]),
                [
                    {"clf": [LogisticRegression()], "clf__C": (0.1, 1.0, "log-uniform")},
                    {"clf": [KNeighborsClassifier()], "clf__n_neighbors": [2, 3]},
                ],
                n_iter=3,
                cv=2,
                error_score="raise",
                random_state=0,
            ),
        ],
        expected_failed_checks=lambda estimator: EXPECTED_FAILED,
    )
)
def test_sklearn_estimator_checks(estimator, check) -> None:
    check(estimator)


# -- drop-in behaviour -----------------------------------------------------------------------
def test_same_cv_results_keys_as_randomized_search_and_masked_inactive_params() -> None:
    X, y = data()
    ours = CondBayesSearchCV(PIPE, SPACE, n_iter=8, sampler=fast_sampler(), cv=3).fit(X, y)
    theirs = RandomizedSearchCV(PIPE, SPACE, n_iter=8, cv=3, random_state=0).fit(X, y)
    results = ours.cv_results_
    assert set(results) >= {k for k in theirs.cv_results_ if not k.startswith("param_")}
    assert {k for k in results if k.startswith("param_")} == {
        f"param_{name}" for branch in SPACE for name in branch
    }
    assert len(results["params"]) == 8 and results["mean_test_score"].shape == (8,)
    for key in results:
        if key.startswith("param_"):
            name = key[len("param_") :]
            column = results[key]
            assert isinstance(column, np.ma.MaskedArray)
            for i, params in enumerate(results["params"]):
                assert bool(column.mask[i]) == (name not in params)
                if name in params:
                    assert column[i] is params[name] or column[i] == params[name]
    # refit semantics and ranks as scikit-learn computes them from cv_results_
    best = int(np.argmax(results["mean_test_score"]))
    assert ours.best_index_ == best and results["rank_test_score"][best] == 1
    assert ours.best_score_ == results["mean_test_score"][best]
    assert ours.best_params_ == results["params"][best]
    assert ours.best_estimator_.get_params()["clf"].__class__ is type(ours.best_params_["clf"])
    assert ours.n_splits_ == 3 and ours.refit_time_ > 0 and callable(ours.scorer_)
    assert ours.predict(X[:5]).shape == (5,) and ours.score(X, y) > 0.5
    # the study: one trial per candidate, in order, the branch as the branching parameter
    numbers = [t.user_attrs["cv_results_index"] for t in ours.study_.trials]
    assert numbers == list(range(8))
    np.testing.assert_allclose([t.value for t in ours.study_.trials], results["mean_test_score"])
    assert all(BRANCH_PARAM in t.params for t in ours.study_.trials)


def test_same_name_in_two_branches_is_a_parameter_of_each() -> None:
    X, y = data()
    search = CondBayesSearchCV(PIPE, SPACE, n_iter=10, sampler=fast_sampler(), cv=2).fit(X, y)
    tree = search.study_.sampler.conditional_space(search.study_)
    names = {node.name for node in tree.nodes}
    assert {"0:clf__C", "1:clf__C"} <= names and "clf__C" not in names
    described = tree.describe()
    assert "0:clf__gamma" in described and "[if __branch__ == 0]" in described


@pytest.mark.parametrize("refit", [False, True, "callable"])
def test_refit_like_randomized_search(refit) -> None:
    X, y = data()
    if refit == "callable":
        refit = lambda results: int(np.argmin(results["mean_test_score"]))  # noqa: E731
    space = {"C": loguniform(1e-2, 1e2)}
    kwargs = dict(n_iter=3, cv=2, refit=refit)
    ours = CondBayesSearchCV(LogisticRegression(), space, random_state=0, **kwargs).fit(X, y)
    theirs = RandomizedSearchCV(LogisticRegression(), space, random_state=0, **kwargs).fit(X, y)
    for attribute in ("best_estimator_", "best_score_", "best_params_", "best_index_"):
        assert hasattr(ours, attribute) == hasattr(theirs, attribute), attribute
    assert hasattr(ours, "predict") == hasattr(theirs, "predict")
    if callable(refit):
        assert ours.best_index_ == int(np.argmin(ours.cv_results_["mean_test_score"]))


def test_multi_metric_scoring_with_refit_metric() -> None:
    X, y = data()
    scoring = {"acc": "accuracy", "nll": "neg_log_loss"}
    search = CondBayesSearchCV(
        LogisticRegression(), {"C": loguniform(1e-3, 1e2)}, n_iter=5,
        sampler=fast_sampler(), scoring=scoring, refit="nll", cv=2,
    ).fit(X, y)  # fmt: skip
    results = search.cv_results_
    assert {"mean_test_acc", "rank_test_acc", "mean_test_nll", "rank_test_nll"} <= set(results)
    assert search.best_index_ == int(np.argmax(results["mean_test_nll"]))
    assert search.best_score_ == results["mean_test_nll"][search.best_index_]
    assert isinstance(search.scorer_, dict) and search.multimetric_
    # the sampler maximised the refit metric
    np.testing.assert_allclose([t.value for t in search.study_.trials], results["mean_test_nll"])
    with pytest.raises(ValueError, match="refit must be set to a scorer key"):
        CondBayesSearchCV(LogisticRegression(), {"C": [1.0, 2.0]}, scoring=scoring).fit(X, y)


class FailingClassifier(ClassifierMixin, BaseEstimator):
    """Fails to fit when ``c > 1``."""

    def __init__(self, c: float = 0.5) -> None:
        self.c = c

    def fit(self, X, y):
        if self.c > 1.0:
            raise ValueError("c > 1 is not allowed")
        self.classes_ = np.unique(y)
        self.majority_ = self.classes_[np.argmax(np.bincount(y))]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_error_score_nan_and_raise() -> None:
    X, y = data()
    space = {"c": uniform(0.0, 2.0)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search = CondBayesSearchCV(
            FailingClassifier(), space, n_iter=8, sampler=fast_sampler(), cv=2
        ).fit(X, y)
    # one warning for the whole search, as RandomizedSearchCV gives (not one per batch)
    assert [w.category for w in caught].count(FitFailedWarning) == 1
    assert sum("test scores are non-finite" in str(w.message) for w in caught) == 1
    results = search.cv_results_
    failed = np.array([p["c"] > 1.0 for p in results["params"]])
    assert failed.any() and (~failed).any()
    assert np.isnan(results["mean_test_score"][failed]).all()
    assert not failed[search.best_index_]
    for trial in search.study_.trials:
        index = trial.user_attrs["cv_results_index"]
        assert trial.user_attrs.get("cv_failed", False) == failed[index]
        if failed[index] and trial.state == TrialState.COMPLETE:  # worst finite score so far
            earlier = results["mean_test_score"][:index]
            assert trial.value == np.nanmin(earlier)
    with pytest.raises(ValueError, match="All the 4 fits failed"):  # sklearn's error
        CondBayesSearchCV(FailingClassifier(), {"c": [1.5, 2.0]}, n_iter=2, cv=2).fit(X, y)
    with pytest.raises(ValueError, match="c > 1 is not allowed"):
        CondBayesSearchCV(
            FailingClassifier(), {"c": [1.5, 0.5]}, n_iter=2, cv=2, error_score="raise"
        ).fit(X, y)


def test_the_default_sampler_proposes_distinct_batches_past_its_startup_trials() -> None:
    """``sampler=None`` (a GP per branch around one shared constant) with ``n_jobs=2``: the
    model-based batches see their first proposal as pending and never repeat it."""
    X, y = data()
    search = CondBayesSearchCV(PIPE, SPACE, n_iter=14, cv=2, n_jobs=2, random_state=0)
    search.fit(X, y)
    trials = search.study_.trials
    assert [t.state.name for t in trials].count("COMPLETE") == 14
    configurations = [tuple(sorted(t.params.items())) for t in trials]
    assert len(set(configurations)) == len(configurations)
    assert np.isfinite(search.best_score_)


def test_n_jobs_2_evaluates_batches_of_distinct_configurations() -> None:
    X, y = data()
    search = CondBayesSearchCV(PIPE, SPACE, n_iter=10, sampler=fast_sampler(), cv=2, n_jobs=2).fit(
        X, y
    )
    configurations = [tuple(sorted(t.params.items())) for t in search.study_.trials]
    assert len(set(configurations)) == len(configurations) == 10
    # a small discrete space: every configuration exactly once (random startup trials repeat
    # each other; repeats are asked again, and the last ones are enqueued)
    grid = {"C": [0.1, 1.0, 10.0], "fit_intercept": [True, False]}
    search = CondBayesSearchCV(
        LogisticRegression(), grid, n_iter=6, sampler=fast_sampler(), cv=2, n_jobs=2
    ).fit(X, y)
    evaluated = [tuple(sorted(p.items())) for p in search.cv_results_["params"]]
    assert len(set(evaluated)) == 6
    with pytest.warns(UserWarning, match="smaller than n_iter=9"):
        search.set_params(n_iter=9).fit(X, y)
    assert len(search.cv_results_["params"]) == 6


def test_same_random_state_gives_the_same_search() -> None:
    X, y = data()

    def run(**kwargs):
        search = CondBayesSearchCV(PIPE, SPACE, n_iter=6, cv=2, **kwargs).fit(X, y)
        return [{k: repr(v) for k, v in p.items()} for p in search.cv_results_["params"]]

    sampler = fast_sampler(seed=3)
    assert run(sampler=sampler) == run(sampler=sampler)  # the given sampler is copied
    default = CondBayesSearchCV(PIPE, SPACE, n_iter=2, cv=2, random_state=1).fit(X, y).study_
    assert isinstance(default.sampler, TreeGPSampler) and not default.sampler._settings.two_step
    assert default.sampler._independent and default.sampler._offsets == "shared"
    assert run(random_state=1) == run(random_state=1)
    assert run(random_state=1) != run(random_state=2)


@pytest.mark.parametrize("n_dicts", [3, MANY_DICTS, MANY_DICTS + 1])
def test_the_default_sampler_gives_each_dict_a_level_and_patience_only_when_there_are_many(
    n_dicts,
) -> None:
    X, y = data()
    space = [{"intercept_scaling": [float(k)], "C": loguniform(1e-2, 1e2)} for k in range(n_dicts)]
    search = CondBayesSearchCV(LogisticRegression(), space, n_iter=12, cv=2, random_state=0)
    study = search.fit(X, y).study_
    many = n_dicts > MANY_DICTS
    many_dicts_options = (
        {
            "path_patience": MANY_DICTS_PATIENCE,
            "local_search_radius": MANY_DICTS_LOCAL_SEARCH_RADIUS,
        }
        if many
        else {}
    )
    expected = {**DEFAULT_SAMPLER_OPTIONS, "independent": not many, **many_dicts_options}
    assert default_sampler_options(n_dicts) == expected
    assert study.sampler._independent is not many
    assert study.sampler._settings.path_patience == (MANY_DICTS_PATIENCE if many else None)
    radius = MANY_DICTS_LOCAL_SEARCH_RADIUS if many else 1.0
    assert study.sampler._settings.local_search_radius == radius
    # the two candidates after the ten random ones are the model's, and new configurations
    assert len({tuple(sorted(p.items())) for p in search.cv_results_["params"]}) == 12


def test_nested_in_cross_val_score() -> None:
    X, y = data(80)
    search = CondBayesSearchCV(
        LogisticRegression(), {"C": loguniform(1e-2, 1e2)}, n_iter=3, cv=2, random_state=0
    )
    scores = cross_val_score(search, X, y, cv=2)
    assert scores.shape == (2,) and np.all(scores > 0.5)
    assert not hasattr(search, "study_")


def test_metadata_routing_of_sample_weight() -> None:
    X, y = data()
    weights = np.linspace(0.1, 2.0, len(y))
    with config_context(enable_metadata_routing=True):
        estimator = (
            LogisticRegression()
            .set_fit_request(sample_weight=True)
            .set_score_request(sample_weight=True)
        )
        search = CondBayesSearchCV(estimator, {"C": [0.1, 1.0]}, n_iter=2, cv=2)
        search.fit(X, y, sample_weight=weights)
    expected = LogisticRegression(**search.best_params_).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(search.best_estimator_.coef_, expected.coef_)
    unweighted = LogisticRegression(**search.best_params_).fit(X, y)
    assert not np.allclose(search.best_estimator_.coef_, unweighted.coef_)


def test_optuna_sampler_callbacks_and_verbose(capsys) -> None:
    X, y = data()
    seen = []

    def record(study, trial):
        # the search's own study (public API only): its trials, its study.stop()
        assert isinstance(study, optuna.Study) and study.trials[-1].number == trial.number
        seen.append(trial.number)
        if len(seen) == 3:
            study.stop()

    search = CondBayesSearchCV(
        LogisticRegression(), {"C": loguniform(1e-2, 1e2), "tol": (1e-5, 1e-3, "log-uniform")},
        n_iter=10, sampler=optuna.samplers.TPESampler(seed=0), cv=2, verbose=1,
        callbacks=[record, optuna.study.MaxTrialsCallback(5)],
    ).fit(X, y)  # fmt: skip
    assert seen == [0, 1, 2] and len(search.cv_results_["params"]) == 3
    printed = capsys.readouterr().out
    assert "[CondBayesSearchCV 3/10] mean_test_score=" in printed
    with pytest.raises(ValueError, match="callbacks must be callables"):
        search.set_params(callbacks=[1]).fit(X, y)


class RecordingCallback:
    """A scikit-learn callback (``sklearn.callback.FitCallback``) recording its tasks."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def setup(self, estimator, context) -> None:
        pass

    def teardown(self, estimator, context) -> None:
        pass

    def on_fit_task_begin(self, estimator, context) -> None:
        self.events.append(("begin", context.task_name))

    def on_fit_task_end(self, estimator, context) -> None:
        self.events.append(("end", context.task_name))


@pytest.mark.skipif(
    not hasattr(RandomizedSearchCV, "set_callbacks"), reason="scikit-learn's callbacks: 1.9+"
)
def test_sklearn_callbacks_see_the_tasks_of_randomized_search_plus_batches() -> None:
    X, y = data()
    space = {"C": loguniform(1e-2, 1e2)}
    ours, theirs = RecordingCallback(), RecordingCallback()
    CondBayesSearchCV(LogisticRegression(), space, n_iter=3, cv=2).set_callbacks(ours).fit(X, y)
    RandomizedSearchCV(LogisticRegression(), space, n_iter=3, cv=2).set_callbacks(theirs).fit(X, y)
    assert [e for e in ours.events if e[1] != "batch"] == theirs.events
    assert ours.events.count(("end", "batch")) == 3


# -- bad search spaces -----------------------------------------------------------------------
class NeverFit(ClassifierMixin, BaseEstimator):
    """Fails the test if anything is fitted before the space is validated."""

    def __init__(self, a: float = 1.0, b: int = 1) -> None:
        self.a = a
        self.b = b

    def fit(self, X, y):
        raise AssertionError("fit was called before the search space was validated")


@pytest.mark.parametrize(
    ("space", "match"),
    [
        ([{"a": [1.0]}, {}], r"search_spaces\[1\] is an empty branch"),
        ([], "search_spaces is an empty list"),
        ({"c": [1.0]}, r"'c' is not a parameter of the estimator"),
        ({"aa": [1.0]}, r"'aa' is not a parameter .* Did you mean 'a'"),
        ({"a": (2.0, 1.0, "uniform")}, r"parameter 'a' = \(2.0, 1.0, 'uniform'\) has low > high"),
        ({"a": (1, 10.5, "uniform")}, r"parameter 'a' = .* mixes an integer and a float"),
        ({"a": (1, "x", "uniform")}, r"parameter 'a' = .* mixes types"),
        ({"a": (1.0, 2.0)}, r"parameter 'a' = \(1.0, 2.0\) is ambiguous: write \[1.0, 2.0\]"),
        ({"a": (0.1, 2.0, "loguniform")}, r"parameter 'a' = .* unknown prior 'loguniform'"),
        ({"a": (0.0, 2.0, "log-uniform")}, r"parameter 'a' .* low must be > 0"),
        ({"a": expon()}, r"parameter 'a' is a distribution without finite bounds"),
        ({"a": "abc"}, r"parameter 'a' = 'abc' is neither a list"),
        ({"a": []}, r"parameter 'a' is an empty list"),
        ({"a": [1.0, 1.0]}, r"parameter 'a' lists the value 1.0 twice"),
        ({"b": FloatDistribution(1.0, 2.0), 3: [1]}, r"has the key 3"),
    ],
)
def test_bad_spaces_name_the_parameter_before_any_fit(space, match) -> None:
    X, y = data(20)
    with pytest.raises(SearchSpaceError, match=match):  # a ValueError, of a public type
        CondBayesSearchCV(NeverFit(), space, n_iter=2, cv=2).fit(X, y)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"n_iter": 0}, r"n_iter=0 must be an integer >= 1"),
        ({"n_iter": 2.5}, r"n_iter=2.5 must be an integer >= 1"),
        ({"sampler": "tpe"}, r"sampler must be an Optuna sampler"),
        ({"random_state": "seed"}, r"random_state must be None, an int"),
        ({"callbacks": print}, r"callbacks must be a list of callables"),
        ({"resource": 3}, r"resource must be the name of an estimator parameter"),
        ({"factor": 1}, r"factor must be an integer >= 2"),
        ({"min_resources": "big"}, r"min_resources must be a positive int or 'smallest'"),
        ({"max_resources": 0}, r"max_resources must be a positive int or 'auto'"),
    ],
)
def test_bad_options_name_the_option_before_any_fit(options, match) -> None:
    X, y = data(20)
    search = CondBayesSearchCV(NeverFit(), {"a": [1, 2]}, cv=2, **{"n_iter": 2, **options})
    with pytest.raises(ValueError, match=match):
        search.fit(X, y)


def test_a_callable_refit_must_give_a_row_of_cv_results() -> None:
    X, y = data()
    space = {"C": loguniform(1e-2, 1e2)}
    for refit, error in ((lambda results: 0.5, TypeError), (lambda results: 99, IndexError)):
        search = CondBayesSearchCV(LogisticRegression(), space, n_iter=3, cv=2, refit=refit)
        with pytest.raises(error, match="best_index_"):
            search.fit(X, y)


def test_bad_pipeline_spaces_name_the_parameter() -> None:
    X, y = data(20)
    pipe = Pipeline([("scaler", StandardScaler()), ("clf", SVC())])
    bad = [
        ({"clf": [SVC(), LogisticRegression()], "clf__gamma": [0.1, 1.0]},
         r"'clf__gamma' is not a parameter of the estimator when clf=LogisticRegression"),
        ({"clf": [SVC(), 3]}, r"parameter 'clf' mixes types: estimators and 3"),
        ({"scaler": [StandardScaler(), "passthrough"], "scaler__with_mean": [True, False]},
         r"'scaler__with_mean' is not a parameter of the estimator when scaler=passthrough"),
        ([{"clf": [SVC()], "clf__C": [1.0, 2.0]}, {"clf": [KNeighborsClassifier()],
          "clf__C": [1.0, 2.0]}], r"search_spaces\[1\] parameter 'clf__C' is not a parameter"),
    ]  # fmt: skip
    for space, match in bad:
        with pytest.raises(ValueError, match=match):
            CondBayesSearchCV(pipe, space, n_iter=2, cv=2).fit(X, y)


def test_space_formats_translate_to_ranges_and_choices() -> None:
    estimator = LogisticRegression()
    translated = translate_search_spaces(
        {
            "C": loguniform(1e-3, 1.0),
            "max_iter": randint(2, 5),
            "class_weight": [None, "balanced", {0: 1, 1: 2}],
            "tol": (1e-5, 1e-3, "log-uniform"),
            "intercept_scaling": (1, 4, "uniform"),
            "l1_ratio": IntDistribution(0, 1),
            "fit_intercept": [True],
        },
        estimator,
    )
    (branch,) = translated.branches
    assert branch.fixed == {"fit_intercept": True}
    dims = {d.name: d.distribution for d in branch.dimensions}
    assert dims["C"] == FloatDistribution(1e-3, 1.0, log=True)
    assert dims["max_iter"] == IntDistribution(2, 4)
    assert dims["class_weight"].choices == ("None", "balanced", "{0: 1, 1: 2}")
    assert dims["tol"] == FloatDistribution(1e-5, 1e-3, log=True)
    assert dims["intercept_scaling"] == IntDistribution(1, 4)
    assert dims["l1_ratio"] == IntDistribution(0, 1)


# -- the default sampler models the log of the gap to the score's best value ---------------
class _OwnScoreClassifier(ClassifierMixin, BaseEstimator):
    """A classifier from outside scikit-learn whose ``score`` is not the accuracy."""

    def __init__(self, prior: str = "first") -> None:
        self.prior = prior

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])

    def score(self, X, y, sample_weight=None):
        return 2.0


LOGREG_SPACE = {"C": loguniform(1e-2, 1e2)}


def _fitted_bound(estimator, space, **kwargs) -> float | None:
    """The ``objective_bound`` of the sampler that a one-candidate search built."""
    X, y = data()
    search = CondBayesSearchCV(estimator, space, n_iter=1, cv=2, random_state=0, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a constant or failed score
        search.fit(X, y.astype(float) if isinstance(estimator, Ridge) else y)
    return search.study_.sampler.objective_bound


@pytest.mark.parametrize(
    "scoring, refit, estimator, space, bound",
    [
        (None, True, PIPE, SPACE, 1.0),  # every last-step choice is a scikit-learn classifier
        (None, True, Ridge(), {"alpha": [1.0]}, 1.0),  # R^2
        (None, True, _OwnScoreClassifier(), {"prior": ["first"]}, None),
        ("accuracy", True, LogisticRegression(), LOGREG_SPACE, 1.0),
        ("neg_mean_squared_error", True, Ridge(), {"alpha": [1.0]}, 0.0),
        ("mutual_info_score", True, LogisticRegression(), LOGREG_SPACE, None),
        (["neg_log_loss", "accuracy"], "accuracy", LogisticRegression(), LOGREG_SPACE, 1.0),
        (["neg_log_loss", "accuracy"], False, LogisticRegression(), LOGREG_SPACE, 0.0),
        (
            {"acc": "accuracy", "own": lambda est, X, y: 3.0},
            "own",
            LogisticRegression(),
            LOGREG_SPACE,
            None,
        ),
        (lambda est, X, y: 0.5, True, LogisticRegression(), LOGREG_SPACE, None),
    ],
)
def test_default_sampler_knows_the_best_value_of_the_score(
    scoring, refit, estimator, space, bound
) -> None:
    assert _fitted_bound(estimator, space, scoring=scoring, refit=refit) == bound


def test_a_last_step_choice_with_its_own_score_turns_the_bound_off() -> None:
    own = [*SPACE, {"clf": [_OwnScoreClassifier()]}]
    assert _fitted_bound(PIPE, own) is None
    assert _fitted_bound(PIPE, SPACE, error_score=2.0) is None
    assert _fitted_bound(PIPE, SPACE, sampler=fast_sampler()) is None  # a given sampler: as is


def test_perfect_scores_do_not_break_the_default_sampler() -> None:
    X, y = data(n=40)
    X[:, 0] += 4.0 * (2 * y - 1)  # separable with a wide margin: many configurations score 1
    search = CondBayesSearchCV(PIPE, SPACE, n_iter=14, cv=2, random_state=0)
    search.fit(X, y)  # 10 random startup trials, then 4 proposals of the tree GP
    scores = search.cv_results_["mean_test_score"]
    assert (scores[:10] == 1.0).any() and len(scores) == 14 and np.isfinite(scores).all()


@pytest.mark.parametrize(
    ("cv", "varies"),
    [
        ("KFold(3, shuffle=True)", True),
        ("ShuffleSplit(3, test_size=0.3)", True),
        ("KFold(3, shuffle=True, random_state=0)", False),
        ("ShuffleSplit(3, test_size=0.3, random_state=0)", False),
        ("KFold(3)", False),
    ],
)
def test_a_splitter_whose_splits_vary_between_batches_is_warned_about(
    cv: str, varies: bool
) -> None:
    from sklearn.model_selection import KFold, ShuffleSplit  # noqa: F401 (used by eval)

    X, y = data()
    search = CondBayesSearchCV(
        Ridge(), {"alpha": [0.1, 1.0]}, n_iter=2, cv=eval(cv), sampler=fast_sampler()
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    warned = [w for w in caught if "shuffles without a fixed random_state" in str(w.message)]
    assert bool(warned) == varies
