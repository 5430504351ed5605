"""condsamplers: Bayesian optimisation over conditional search spaces for Optuna and sklearn."""

from condsamplers.samplers import ArcGPSampler, BNGPSampler, ConditionalSampler, TreeGPSampler
from condsamplers.space import ConditionalSpace, infer_space

__all__ = [
    "ArcGPSampler",
    "BNGPSampler",
    "ConditionalSampler",
    "ConditionalSpace",
    "TreeGPSampler",
    "infer_space",
]
__version__ = "0.1.0"
