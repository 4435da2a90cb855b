"""What the synthetic generators share (:mod:`goldboard.cases.synth` and one module per
benchmark family): the default simulated model names, how the i-th model behaves, and a
bulk categorical draw.  Deterministic in the generator's seed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEFAULT_MODELS = ("sim-llm-a", "sim-llm-b")


def pick(rng: np.random.Generator, n: int, probs: Sequence[float]) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    return rng.choice(len(p), size=n, p=p / p.sum())


PROFILE_ORDER = ("balanced", "over-refusing", "over-confident")


def model_profile(i: int) -> str:
    """Behaviour of the i-th model name: balanced, over-refusing, over-confident, then repeating."""
    return PROFILE_ORDER[i % len(PROFILE_ORDER)]
