"""Every task of the real-HPO suite, by name; each module is imported only when its task is."""

from __future__ import annotations

from benchmarks.hpo.spec import Task

CASH_TASKS = ("cash_iris", "cash_wine", "cash_breast_cancer", "cash_digits", "cash_diabetes")
AX_TASKS = ("ax_hss_mnist", "ax_hss_fashion_mnist", "ax_hss_cifar10")
TASKS = CASH_TASKS + AX_TASKS


def get_task(name: str) -> Task:
    """The task called ``name`` (see :data:`TASKS`)."""
    if name in CASH_TASKS:
        from benchmarks.hpo.cash import cash_tasks

        return cash_tasks()[name]
    if name in AX_TASKS:
        from benchmarks.hpo.ax_hss import ax_hss_tasks

        return ax_hss_tasks()[name]
    raise ValueError(f"unknown task {name!r}; choose from {TASKS}")
