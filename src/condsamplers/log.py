"""The library's loggers: children of Optuna's library logger, named ``optuna.<module>``.

Messages (a distribution changed mid-study, jitter added to a kernel matrix, a trial sampled by
the independent sampler, ...) therefore follow ``optuna.logging.set_verbosity``, go through
Optuna's default handler and its ``disable_default_handler`` / ``enable_propagation`` switches,
as a user of Optuna's own samplers expects. The sklearn estimators and the models use the same
loggers.
"""

from __future__ import annotations

import logging

import optuna


def get_logger(module_name: str) -> logging.Logger:
    """The logger of module ``module_name`` (``__name__``), under Optuna's library logger."""
    return optuna.logging.get_logger(f"optuna.{module_name}")
