"""Shared test settings: small torch problems run fastest on one thread on a 2-core machine."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

torch.set_num_threads(1)
