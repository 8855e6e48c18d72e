"""Quasi-random points: SciPy's scrambled Sobol sequence, mapped onto the space as Optuna's QMCSampler
maps it (optuna/samplers/_qmc.py and optuna/_transform.py, with transform_0_1).

Optuna's QMCSampler cannot be asked statelessly: it counts its points in the study's storage and draws
its first trial at random. Trial n here is Sobol point n - 1 (the first point too), with the sweep's seed
as the scramble seed, which is what QMCSampler(qmc_type="sobol", seed=seed) suggests for its trial n + 1.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
from scipy.stats import qmc

from .space import Spec

# SciPy's Sobol engine is not safe to build from two threads at once (Optuna locks it the same way).
_engine_lock = threading.Lock()


def sobol_point(d: int, seed: int, index: int) -> np.ndarray:
    """Point `index` (0-based) of the d-dimensional scrambled Sobol sequence seeded `seed`."""
    with _engine_lock:
        engine = qmc.Sobol(d, seed=seed, scramble=True)
    if index > 0:
        engine.fast_forward(index)
    return np.asarray(engine.random(1)[0], dtype=np.float64)


def _below(high: float) -> float:
    return float(np.nextafter(high, high - 1))


def _mapped(spec: Spec, u: float) -> Any:
    kind = spec["distribution"]
    if kind == "choice":
        n = len(spec["values"])  # type: ignore[typeddict-item]
        return spec["values"][int(min(u * n, _below(n)))]  # type: ignore[typeddict-item]
    low, high = spec["low"], spec["high"]  # type: ignore[typeddict-item]
    if kind == "uniform":
        low, high = float(low), float(high)
        return float(min(low + u * (high - low), _below(high)))
    if kind == "log_uniform":
        lo, hi = math.log(low), math.log(high)
        return float(np.clip(math.exp(lo + u * (hi - lo)), low, _below(high)))
    low, high = int(low), int(high)
    if spec.get("log", False) is True:
        lo, hi = math.log(low - 0.5), math.log(high + 0.5)
        return min(max(int(round(math.exp(lo + u * (hi - lo)))), low), high)
    lo, hi = low - 0.5, high + 0.5
    return min(max(math.floor(lo + u * (hi - lo) - low + 0.5) + low, low), high)


def sobol_params(space: dict[str, Spec], seed: int, trial: int) -> dict[str, Any]:
    """Trial `trial`'s point (1-based), one value per path of the (sorted) space."""
    if not space:
        return {}
    point = sobol_point(len(space), seed, trial - 1)
    return {name: _mapped(spec, float(u)) for (name, spec), u in zip(space.items(), point)}
