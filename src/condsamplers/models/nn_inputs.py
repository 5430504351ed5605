"""What the neural surrogates (:mod:`~condsamplers.models.dngo`,
:mod:`~condsamplers.models.bohamiann`) share: the network input of a conditional configuration
and a small functional tanh MLP.

**Inputs.** For each encoded column ``j`` with active flag ``a_j`` (see
:mod:`condsamplers.space`):

* numerical: ``a_j (2 x_j - 1)``, one input in ``[-1, 1]`` (centred for tanh units; an inactive
  value is 0, which the active flag below tells apart from ``x_j = 1/2``);
* categorical with ``K`` choices: ``a_j one_hot(x_j)``, ``K`` inputs (all 0 when inactive);
* then the ``d`` active flags ``a_j`` themselves, as 0/1 inputs.

Inputs are bounded by construction, so they are *not* standardised: a constant column (or a
column never active) gives a constant input, which a network tolerates, where a z-score would
divide by a zero standard deviation (the NaN of RoBO/pybnn on constant columns).

**Network.** ``sizes = (n_inputs, h_1, ..., h_L, 1)``, ``tanh`` after every hidden layer, a
linear output. The parameters live in one flat vector ``theta`` (weights row-major, then
biases, layer by layer), so that a sampler or an optimiser updates one tensor, and a stack of
``K`` vectors ``(K, P)`` evaluates ``K`` networks at once (BOHAMIANN's samples).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from condsamplers.one_hot import one_hot_columns
from condsamplers.space import FeatureSpec


@dataclasses.dataclass(frozen=True)
class InputEncoder:
    """The network input of encoded configurations (module docstring).

    Attributes:
        n_categories: per column, the number of choices (0: numerical), as in
            :class:`~condsamplers.space.FeatureSpec`.
    """

    n_categories: tuple[int, ...]

    @classmethod
    def from_categories(cls, n_categories: np.ndarray) -> InputEncoder:
        return cls(tuple(int(k) for k in np.asarray(n_categories)))

    @property
    def n_inputs(self) -> int:
        return sum(max(1, k) for k in self.n_categories) + len(self.n_categories)

    def __call__(self, X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        """``(n, n_inputs)`` inputs of rows ``X`` (differentiable in the numerical columns)."""
        on = active.to(X.dtype)
        one_hots = one_hot_columns(X, FeatureSpec(np.array(self.n_categories, dtype=np.int64)))
        parts = []
        for j, k in enumerate(self.n_categories):
            if k > 0:
                parts.append(one_hots[j] * on[:, j : j + 1])
            else:
                parts.append(((2.0 * X[:, j] - 1.0) * on[:, j])[:, None])
        parts.append(on)
        return torch.cat(parts, dim=1)


@dataclasses.dataclass(frozen=True)
class MLP:
    """A tanh multi-layer perceptron over a flat parameter vector (module docstring)."""

    sizes: tuple[int, ...]

    @classmethod
    def build(cls, n_inputs: int, hidden_sizes: tuple[int, ...]) -> MLP:
        return cls((int(n_inputs), *(int(h) for h in hidden_sizes), 1))

    @property
    def n_params(self) -> int:
        return sum(a * b + b for a, b in zip(self.sizes[:-1], self.sizes[1:], strict=True))

    @property
    def n_hidden(self) -> int:
        """Width of the last hidden layer (DNGO's basis, bias feature excluded)."""
        return self.sizes[-2]

    def _slices(self) -> list[tuple[slice, slice, int, int]]:
        out, start = [], 0
        for a, b in zip(self.sizes[:-1], self.sizes[1:], strict=True):
            out.append(
                (slice(start, start + a * b), slice(start + a * b, start + a * b + b), a, b)
            )
            start += a * b + b
        return out

    def init(self, generator: torch.Generator) -> torch.Tensor:
        """LeCun-normal weights (variance ``1 / fan_in``, suited to tanh), zero biases; float64
        on the CPU."""
        theta = torch.zeros(self.n_params, dtype=torch.float64)
        for weights, _, a, b in self._slices():
            draw = torch.randn(a * b, generator=generator, dtype=torch.float64)
            theta[weights] = draw / math.sqrt(a)
        return theta

    def weight_mask(self) -> torch.Tensor:
        """1 at the weights, 0 at the biases (weight decay applies to weights only)."""
        mask = torch.zeros(self.n_params, dtype=torch.float64)
        for weights, _, _, _ in self._slices():
            mask[weights] = 1.0
        return mask

    def hidden(self, theta: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        """Last hidden layer: ``(n, h_L)`` for ``theta (P,)``, ``(K, n, h_L)`` for ``(K, P)``."""
        h = inputs
        for weights, biases, a, b in self._slices()[:-1]:
            W = theta[..., weights].reshape(*theta.shape[:-1], b, a)
            h = torch.tanh(h @ W.transpose(-1, -2) + theta[..., biases].unsqueeze(-2))
        return h

    def output_of_hidden(self, theta: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """The linear output layer applied to a last hidden layer: ``(n,)`` or ``(K, n)``."""
        weights, biases, a, _ = self._slices()[-1]
        w = theta[..., weights].reshape(*theta.shape[:-1], a, 1)
        return (h @ w)[..., 0] + theta[..., biases]

    def __call__(self, theta: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        """Network output: ``(n,)`` for ``theta (P,)``, ``(K, n)`` for ``theta (K, P)``."""
        return self.output_of_hidden(theta, self.hidden(theta, inputs))

    def forward_layers(self, theta: torch.Tensor, inputs: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's activations of one network: ``[inputs, h_1, ..., h_L, output]``."""
        layers = [inputs]
        slices = self._slices()
        for weights, biases, a, b in slices[:-1]:
            W = theta[weights].view(b, a)
            layers.append(torch.tanh(torch.addmm(theta[biases], layers[-1], W.T)))
        weights, biases, a, _ = slices[-1]
        layers.append(torch.addmm(theta[biases], layers[-1], theta[weights].view(1, a).T)[:, 0])
        return layers

    def backward(
        self, theta: torch.Tensor, layers: list[torch.Tensor], output_grad: torch.Tensor
    ) -> torch.Tensor:
        """``d loss / d theta`` (flat, ``(P,)``) by backpropagation through ``layers`` (from
        :meth:`forward_layers`), given ``d loss / d output`` per row. Written out by hand: the
        autograd of views into one flat vector scatters a full-size gradient per layer, which
        dominates the cost of these small networks."""
        grad = torch.empty_like(theta)
        delta = output_grad[:, None]
        slices = self._slices()
        for depth in range(len(slices) - 1, -1, -1):
            weights, biases, a, b = slices[depth]
            below = layers[depth]
            torch.mm(delta.T, below, out=grad[weights].view(b, a))
            torch.sum(delta, dim=0, out=grad[biases])
            if depth:
                delta = (delta @ theta[weights].view(b, a)) * (1.0 - below * below)
        return grad


def resolve_device(device: str | torch.device, model_name: str) -> torch.device:
    """``torch.device(device)``, checked: ``"cpu"`` or an available CUDA device."""
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"{model_name}: device={device!r} is not a torch device.") from error
    if resolved.type not in ("cpu", "cuda"):
        raise ValueError(f"{model_name}: device={device!r} must be 'cpu' or 'cuda'.")
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{model_name}: device={device!r} but CUDA is not available.")
    return resolved


def check_hidden_sizes(hidden_sizes: object, model_name: str) -> tuple[int, ...]:
    """``hidden_sizes`` as a tuple of positive ints (ValueError naming the parameter)."""
    try:
        sizes = tuple(hidden_sizes)  # type: ignore[arg-type]
    except TypeError:
        sizes = ()
    if not sizes or not all(
        isinstance(h, (int, np.integer)) and not isinstance(h, bool) and h > 0 for h in sizes
    ):
        raise ValueError(
            f"{model_name}: hidden_sizes={hidden_sizes!r} must be a non-empty sequence of "
            "positive integers."
        )
    return tuple(int(h) for h in sizes)
