"""condsamplers: Bayesian optimisation over conditional search spaces for Optuna and sklearn."""

from importlib.metadata import PackageNotFoundError, version

from condsamplers.samplers import (
    ArcGPSampler,
    BNGPSampler,
    BOHAMIANNSampler,
    ConditionalSampler,
    DNGOSampler,
    TreeGPSampler,
)
from condsamplers.space import ConditionalSpace, infer_space

__all__ = [
    "ArcGPSampler",
    "BNGPSampler",
    "BOHAMIANNSampler",
    "ConditionalSampler",
    "ConditionalSpace",
    "DNGOSampler",
    "TreeGPSampler",
    "infer_space",
]

try:
    __version__ = version("condsamplers")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
