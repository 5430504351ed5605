"""condsamplers: Bayesian optimisation over conditional search spaces for Optuna and sklearn."""

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
__version__ = "0.1.0"
