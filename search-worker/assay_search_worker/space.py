"""The search space as Optuna sees it: one distribution per dotted path, and values mapped both ways.

A `choice` is an Optuna categorical over the indices of its values, never over the values themselves:
Optuna takes only None, bool, int, float and str, compares them with `==` (so 1, 1.0 and True are one
choice), and a sweep may choose between lists or mappings. The index is what Optuna samples anyway, so a
choice between plain values is sampled exactly as `CategoricalDistribution(values)` would be.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal, TypedDict, Union

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)


class UniformSpec(TypedDict):
    distribution: Literal["uniform", "log_uniform"]
    low: float
    high: float


class IntSpec(TypedDict, total=False):
    distribution: Literal["int"]
    low: int
    high: int
    log: bool


class ChoiceSpec(TypedDict):
    distribution: Literal["choice"]
    values: list[Any]


Spec = Union[UniformSpec, IntSpec, ChoiceSpec]
Space = dict[str, Spec]


class InvalidRequest(ValueError):
    """A request no sampler can answer: retrying it gives the same error."""


def ordered(space: Any) -> dict[str, Spec]:
    """The space by sorted path: a JSON object's key order does not survive every store (jsonb sorts
    keys), and Optuna's samplers draw in the order the distributions are given."""
    if not isinstance(space, dict):
        raise InvalidRequest("space must be an object")
    return {name: space[name] for name in sorted(space)}


def _number(spec: Any, key: str, name: str) -> float:
    value = spec.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidRequest(f"space.{name}.{key} must be a finite number")
    return float(value)


def _integer(spec: Any, key: str, name: str) -> int:
    value = _number(spec, key, name)
    if not value.is_integer():
        raise InvalidRequest(f"space.{name}.{key} must be an integer")
    return int(value)


def distribution_of(name: str, spec: Any) -> BaseDistribution:
    """Optuna's distribution for one dimension; an invalid one raises InvalidRequest naming it."""
    kind = spec.get("distribution") if isinstance(spec, dict) else None
    if kind in ("uniform", "log_uniform"):
        low, high = _number(spec, "low", name), _number(spec, "high", name)
        log = kind == "log_uniform"
        if log and low <= 0:
            raise InvalidRequest(f"space.{name}.low must be greater than 0 for log_uniform")
    elif kind == "int":
        low, high = _integer(spec, "low", name), _integer(spec, "high", name)
        log = spec.get("log", False) is True
        if log and low < 1:
            raise InvalidRequest(f"space.{name}.low must be at least 1 for a log-scaled int")
    elif kind == "choice":
        values = spec.get("values")
        if not isinstance(values, list) or len(values) == 0:
            raise InvalidRequest(f"space.{name}.values must be a non-empty list")
        return CategoricalDistribution(list(range(len(values))))
    else:
        raise InvalidRequest(f"space.{name}.distribution {kind!r} is not uniform, log_uniform, int or choice")
    if low >= high:
        raise InvalidRequest(f"space.{name}.low must be less than high")
    if kind == "int":
        return IntDistribution(int(low), int(high), log=log)
    return FloatDistribution(low, high, log=log)


def _same_json(value: Any) -> str:
    # Values come and go as JSON, so JSON decides which choice a value is: 1 and true stay apart.
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def to_optuna(name: str, spec: Spec, value: Any) -> Any:
    """A trial's value as its Optuna distribution holds it (a choice as its index)."""
    if spec["distribution"] == "choice":
        wanted = _same_json(value)
        for index, candidate in enumerate(spec["values"]):
            if _same_json(candidate) == wanted:
                return index
        raise InvalidRequest(f"history: {name}={wanted} is not one of the choices")
    if spec["distribution"] == "int":
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidRequest(f"history: {name}={value!r} is not an integer")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidRequest(f"history: {name}={value!r} is not a number")
    return float(value)


def from_optuna(spec: Spec, value: Any) -> Any:
    """Optuna's value as the sweep's (a choice's index as the chosen value), plain JSON types."""
    if spec["distribution"] == "choice":
        return spec["values"][int(value)]
    if spec["distribution"] == "int":
        return int(value)
    return float(value)
