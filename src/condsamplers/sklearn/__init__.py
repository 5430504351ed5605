"""scikit-learn estimators over conditional inputs (``NaN`` = inactive feature)."""

from condsamplers.sklearn.regressors import CondGPRegressor, TreeGPRegressor

__all__ = ["CondGPRegressor", "TreeGPRegressor"]
