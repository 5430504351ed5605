"""Surrogate models behind one interface (:class:`~condsamplers.models.base.Surrogate`)."""

from condsamplers.models.base import Surrogate
from condsamplers.models.bohamiann import BOHAMIANN
from condsamplers.models.dngo import DNGO
from condsamplers.models.gp import ExactGP
from condsamplers.models.tree_gp import TreeGP

__all__ = ["BOHAMIANN", "DNGO", "ExactGP", "Surrogate", "TreeGP"]
