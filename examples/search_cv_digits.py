"""CondBayesSearchCV against RandomizedSearchCV: a pipeline choosing scaler x classifier.

scikit-learn's digits data; the pipeline's scaler is standard, min-max or none, and its
classifier is an RBF SVC (C, gamma), a polynomial SVC (C, degree), a logistic regression (C) or
k-nearest neighbours (n_neighbors, weights). Each dict of the search space is one branch; its
parameters exist only on that branch (the ``clf__C`` of the SVC branches and the one of the
logistic regression are different parameters). Both searches get the same space, written once
in ``RandomizedSearchCV``'s format, the same budget and 3-fold cross-validation; the best
pipeline of each is then scored on a held-out test set. The script also prints the tree that
the sampler inferred from the trials.

Usage::

    python examples/search_cv_digits.py [--n-iter 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
import warnings

from scipy.stats import loguniform, randint
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RandomizedSearchCV, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from condsamplers.sklearn import CondBayesSearchCV

SCALERS = [StandardScaler(), MinMaxScaler(), "passthrough"]
SEARCH_SPACES = [
    {
        "scaler": SCALERS,
        "clf": [SVC(kernel="rbf")],
        "clf__C": loguniform(1e-2, 1e3),
        "clf__gamma": loguniform(1e-5, 1e0),
    },
    {
        "scaler": SCALERS,
        "clf": [SVC(kernel="poly")],
        "clf__C": loguniform(1e-2, 1e3),
        "clf__degree": randint(2, 5),
    },
    {
        "scaler": SCALERS,
        "clf": [LogisticRegression(max_iter=300)],
        "clf__C": loguniform(1e-4, 1e2),
    },
    {
        "scaler": SCALERS,
        "clf": [KNeighborsClassifier()],
        "clf__n_neighbors": randint(1, 31),
        "clf__weights": ["uniform", "distance"],
    },
]

BRANCHES = ["rbf", "poly", "logreg", "knn"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-iter", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", type=int, default=0)
    args = parser.parse_args()

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=0
    )
    pipe = Pipeline([("scaler", StandardScaler()), ("clf", SVC())])
    common = dict(n_iter=args.n_iter, cv=3, n_jobs=1, random_state=args.seed)
    searches = {
        "CondBayesSearchCV": CondBayesSearchCV(
            pipe, SEARCH_SPACES, verbose=args.verbose, **common
        ),
        "RandomizedSearchCV": RandomizedSearchCV(pipe, SEARCH_SPACES, **common),
    }
    for name, search in searches.items():
        start = time.perf_counter()
        with warnings.catch_warnings(), threadpool_limits(limits=1):
            warnings.simplefilter("ignore", ConvergenceWarning)
            search.fit(X_train, y_train)
        elapsed = time.perf_counter() - start
        best = ", ".join(
            f"{k}={type(v).__name__ if hasattr(v, 'fit') else v}"
            for k, v in search.best_params_.items()
        )
        print(
            f"{name:19s} best CV accuracy {search.best_score_:.4f}, test accuracy "
            f"{search.score(X_test, y_test):.4f}, {elapsed:.0f} s\n    {best}"
        )

    ours = searches["CondBayesSearchCV"]
    labels = {
        id(space["clf"][0]): label for space, label in zip(SEARCH_SPACES, BRANCHES, strict=True)
    }
    chosen = [labels[id(p["clf"])] for p in ours.cv_results_["params"]]
    print(f"\nBranches CondBayesSearchCV evaluated, in order: {' '.join(chosen)}")
    print("\nThe tree its sampler inferred (__branch__ = index of the dict in SEARCH_SPACES):")
    print(ours.study_.sampler.conditional_space(ours.study_).describe())


if __name__ == "__main__":
    main()
