"""The best value a scikit-learn score can reach, when it is known.

``CondBayesSearchCV``'s default sampler models the log of each score's gap to it (the log error of
an accuracy; :func:`condsamplers.warping.log_regret`), on which the good configurations are told
apart as clearly as the bad ones. Only scores whose bound holds for every estimator and data set
are listed; for any other score (a callable, ``mutual_info_score``, the ``score`` method of an
estimator from outside scikit-learn that overrides the accuracy or R^2 of scikit-learn's mixins)
the bound is ``None`` and the scores are modelled as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sklearn.base import ClassifierMixin, RegressorMixin

#: Named scorers whose best value is 1 (a perfect prediction).
_AT_MOST_ONE = frozenset(
    {
        "accuracy",
        "adjusted_mutual_info_score",
        "adjusted_rand_score",
        "average_precision",
        "balanced_accuracy",
        "completeness_score",
        "d2_absolute_error_score",
        "d2_brier_score",
        "d2_log_loss_score",
        "explained_variance",
        "fowlkes_mallows_score",
        "homogeneity_score",
        "matthews_corrcoef",
        "normalized_mutual_info_score",
        "r2",
        "rand_score",
        "top_k_accuracy",
        "v_measure_score",
        *(
            f"{metric}{average}"
            for metric in ("f1", "jaccard", "precision", "recall")
            for average in ("", "_macro", "_micro", "_samples", "_weighted")
        ),
        *(
            f"roc_auc{variant}"
            for variant in ("", "_ovo", "_ovo_weighted", "_ovr", "_ovr_weighted")
        ),
    }
)
#: Named scorers that negate a loss (``greater_is_better=False``): their best value is 0.
_AT_MOST_ZERO = frozenset(
    {
        "neg_brier_score",
        "neg_log_loss",
        "neg_max_error",
        "neg_mean_absolute_error",
        "neg_mean_absolute_percentage_error",
        "neg_mean_gamma_deviance",
        "neg_mean_poisson_deviance",
        "neg_mean_squared_error",
        "neg_mean_squared_log_error",
        "neg_median_absolute_error",
        "neg_negative_likelihood_ratio",
        "neg_root_mean_squared_error",
        "neg_root_mean_squared_log_error",
    }
)


def named_score_bound(name: str) -> float | None:
    """The best value of the scorer ``name`` (``sklearn.metrics.get_scorer(name)``)."""
    if name in _AT_MOST_ONE:
        return 1.0
    if name in _AT_MOST_ZERO:
        return 0.0
    return None


def objective_score_bound(
    scoring: Any, refit: Any, final_estimators: Sequence[Any]
) -> float | None:
    """The best value of the score a search maximises (the ``refit`` metric of a multi-metric
    ``scoring``, else its first metric; ``scoring=None``: the ``score`` of the estimator that
    ends the pipeline, one of ``final_estimators``)."""
    if scoring is None:
        return _default_score_bound(final_estimators)
    if isinstance(scoring, str):
        return named_score_bound(scoring)
    if callable(scoring):
        return None
    entries = dict(scoring) if isinstance(scoring, Mapping) else {name: name for name in scoring}
    if not entries:
        return None
    key = refit if isinstance(refit, str) and refit in entries else next(iter(entries))
    entry = entries[key]
    return named_score_bound(entry) if isinstance(entry, str) else None


def _default_score_bound(final_estimators: Sequence[Any]) -> float | None:
    """1 when every estimator that may end the pipeline scores with scikit-learn's own
    ``ClassifierMixin.score`` (accuracy) or ``RegressorMixin.score`` (R^2)."""
    for mixin in (ClassifierMixin, RegressorMixin):
        if all(_scores_like(final, mixin) for final in final_estimators):
            return 1.0
    return None


def _scores_like(estimator: Any, mixin: type) -> bool:
    """``estimator.score`` is ``mixin``'s: inherited, or a scikit-learn estimator's own
    override (``KNeighborsClassifier.score`` is still the accuracy)."""
    if not isinstance(estimator, mixin):
        return False
    own = type(estimator).__module__.partition(".")[0] == "sklearn"
    return own or type(estimator).score is mixin.score  # type: ignore[attr-defined]
