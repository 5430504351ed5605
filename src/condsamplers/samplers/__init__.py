"""Optuna samplers over conditional search spaces."""

from condsamplers.samplers.arc import ArcGPSampler
from condsamplers.samplers.base import ConditionalSampler
from condsamplers.samplers.bn import BNGPSampler
from condsamplers.samplers.bohamiann import BOHAMIANNSampler
from condsamplers.samplers.dngo import DNGOSampler
from condsamplers.samplers.tree import TreeGPSampler

__all__ = [
    "ArcGPSampler",
    "BNGPSampler",
    "BOHAMIANNSampler",
    "ConditionalSampler",
    "DNGOSampler",
    "TreeGPSampler",
]
