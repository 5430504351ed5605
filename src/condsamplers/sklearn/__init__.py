"""scikit-learn estimators over conditional inputs (``NaN`` = inactive feature)."""

from condsamplers.sklearn.regressors import (
    BOHAMIANNRegressor,
    CondGPRegressor,
    DNGORegressor,
    TreeGPRegressor,
)

__all__ = ["BOHAMIANNRegressor", "CondGPRegressor", "DNGORegressor", "TreeGPRegressor"]
