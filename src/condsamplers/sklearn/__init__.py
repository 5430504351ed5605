"""scikit-learn estimators: regressors over conditional inputs (``NaN`` = inactive feature)
and ``CondBayesSearchCV``, Bayesian hyperparameter search over conditional spaces."""

from condsamplers.sklearn.regressors import (
    BOHAMIANNRegressor,
    CondGPRegressor,
    DNGORegressor,
    TreeGPRegressor,
)
from condsamplers.sklearn.search import CondBayesSearchCV
from condsamplers.sklearn.search_space import SearchSpaceError

__all__ = [
    "BOHAMIANNRegressor",
    "CondBayesSearchCV",
    "CondGPRegressor",
    "DNGORegressor",
    "SearchSpaceError",
    "TreeGPRegressor",
]
