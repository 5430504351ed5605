"""One thread for the models' small torch and BLAS problems.

A suggestion's matrices are tens to hundreds of rows: on several threads they spend more time
handing work between the threads than computing, and several processes of one machine (the
workers of a study, scikit-learn's ``n_jobs``) would oversubscribe its cores. The samplers, the
scikit-learn regressors and the sensitivity analysis therefore compute on one thread, restoring
the caller's settings afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import threadpoolctl
import torch

__all__ = ["single_threaded"]


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Run the block (or, as a decorator, the function) with torch and the BLAS libraries on
    one thread; the previous settings come back after it."""
    old_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpoolctl.threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(old_threads)
