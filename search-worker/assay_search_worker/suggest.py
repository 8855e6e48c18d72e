"""Suggestions for random, sobol and tpe sweeps, from well-kept libraries.

- random: Optuna's RandomSampler.
- sobol: SciPy's scrambled Sobol sequence, mapped as Optuna's QMCSampler maps it (sobol.py).
- tpe: Optuna's TPESampler through the ask-and-tell API, fed every earlier trial.

Stateless: each request builds a fresh in-memory study from its history, so the same request and the same
results give the same suggestion. Each trial's sampler is seeded from (seed, trial number): two trials never
draw the same random stream, and no trial's draw depends on how many were asked before it.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from typing import Any, Literal, Optional, TypedDict

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, RandomSampler, TPESampler
from optuna.trial import TrialState, create_trial

from .sobol import sobol_params
from .space import InvalidRequest, Spec, distribution_of, from_optuna, ordered, to_optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


class TrialRecord(TypedDict):
    trial: int
    params: dict[str, Any]
    state: Literal["complete", "pruned", "failed", "running"]
    value: Optional[float]
    intermediate: list[list[float]]


class SuggestInput(TypedDict):
    strategy: Literal["random", "sobol", "tpe"]
    space: dict[str, Spec]
    goal: Literal["minimize", "maximize"]
    seed: int
    trial: int
    history: list[TrialRecord]


class Suggestion(TypedDict):
    params: dict[str, Any]


_STATES = {
    "complete": TrialState.COMPLETE,
    "pruned": TrialState.PRUNED,
    "failed": TrialState.FAIL,
    "running": TrialState.RUNNING,
}


def trial_seed(seed: int, trial: int) -> int:
    """A 32-bit seed for one trial's sampler, mixed so that neighbouring trials are unrelated."""
    digest = hashlib.sha256(f"{seed}:{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _finite_or_none(value: Any) -> Optional[float]:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def frozen_trial(
    record: TrialRecord, space: dict[str, Spec], distributions: dict[str, BaseDistribution]
) -> optuna.trial.FrozenTrial:
    """A history record as the trial Optuna's own ask-and-tell loop would have stored.

    As `study.tell` does: a complete trial without a value, or with NaN, is FAIL; a pruned trial's value
    is its last intermediate value unless that is NaN (±inf are values, as in Optuna), or the record's
    value when it sent no intermediate ones.
    """
    if record.get("state") not in _STATES:
        raise InvalidRequest(f"history: trial {record.get('trial')} has state {record.get('state')!r}")
    state = _STATES[record["state"]]
    params = record.get("params") or {}
    missing = [name for name in space if name not in params]
    if missing:
        raise InvalidRequest(f"history: trial {record.get('trial')} lacks {', '.join(missing)}")
    intermediate: dict[int, float] = {}
    for step, v in record.get("intermediate") or []:
        intermediate[int(step)] = float("nan") if v is None else float(v)
    value = _finite_or_none(record.get("value"))
    if state == TrialState.COMPLETE and value is None:
        state = TrialState.FAIL
    if state == TrialState.PRUNED and intermediate:
        last = intermediate[max(intermediate)]
        value = None if math.isnan(last) else last
    elif state != TrialState.COMPLETE:
        value = None
    try:
        return create_trial(
            state=state,
            params={name: to_optuna(name, spec, params[name]) for name, spec in space.items()},
            distributions=distributions,
            value=value,
            intermediate_values=intermediate,
        )
    except InvalidRequest:
        raise
    except ValueError as error:
        raise InvalidRequest(f"history: trial {record.get('trial')}: {error}") from error


def _ask(sampler: BaseSampler, request: SuggestInput, space: dict[str, Spec]) -> dict[str, Any]:
    distributions = {name: distribution_of(name, spec) for name, spec in space.items()}
    study = optuna.create_study(sampler=sampler, direction=request["goal"])
    history = sorted(request.get("history") or [], key=lambda record: int(record["trial"]))
    for record in history:
        study.add_trial(frozen_trial(record, space, distributions))
    with warnings.catch_warnings():
        # Optuna warns that some sampler options are experimental; the pinned version is the contract.
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        trial = study.ask(distributions)
    return {name: from_optuna(spec, trial.params[name]) for name, spec in space.items()}


def _checked(request: Any) -> tuple[SuggestInput, dict[str, Spec]]:
    if not isinstance(request, dict):
        raise InvalidRequest("the request must be an object")
    if request.get("strategy") not in ("random", "sobol", "tpe"):
        raise InvalidRequest(f"strategy {request.get('strategy')!r} is not random, sobol or tpe")
    if request.get("goal") not in ("minimize", "maximize"):
        raise InvalidRequest(f"goal {request.get('goal')!r} is not minimize or maximize")
    for key in ("seed", "trial"):
        value = request.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidRequest(f"{key} must be a non-negative integer")
    if request["trial"] < 1:
        raise InvalidRequest("trial must be at least 1")
    space = ordered(request.get("space"))
    for name, spec in space.items():
        distribution_of(name, spec)
    return request, space  # type: ignore[return-value]


def suggest(request: Any) -> Suggestion:
    """One trial's point: dotted path → value, for every key of the space."""
    checked, space = _checked(request)
    seed, trial = checked["seed"], checked["trial"]
    if checked["strategy"] == "sobol":
        return {"params": sobol_params(space, seed, trial)}
    sampler: BaseSampler
    if checked["strategy"] == "random":
        sampler = RandomSampler(seed=trial_seed(seed, trial))
    else:
        sampler = TPESampler(seed=trial_seed(seed, trial))
    return {"params": _ask(sampler, checked, space)}
