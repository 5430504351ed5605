"""condsamplers' Optuna samplers for conditional (define-by-run, tree-structured) search
spaces, as an OptunaHub package: ``optunahub.load_module("samplers/condsamplers")``."""

from __future__ import annotations

from condsamplers import (
    ArcGPSampler,
    BNGPSampler,
    BOHAMIANNSampler,
    DNGOSampler,
    TreeGPSampler,
)

__all__ = ["ArcGPSampler", "BNGPSampler", "BOHAMIANNSampler", "DNGOSampler", "TreeGPSampler"]
