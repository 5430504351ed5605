"""Optuna samplers over conditional search spaces."""

from condsamplers.samplers.arc import ArcGPSampler
from condsamplers.samplers.base import ConditionalSampler

__all__ = ["ArcGPSampler", "ConditionalSampler"]
