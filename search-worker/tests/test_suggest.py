"""The sampler against the reference implementations: Optuna's samplers driven by hand, SciPy's Sobol."""

from __future__ import annotations

import copy
import json
import math
import unittest
import warnings
from typing import Any

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import QMCSampler, RandomSampler, TPESampler
from optuna.trial import TrialState, create_trial
from scipy.stats import qmc

from assay_search_worker.space import InvalidRequest
from assay_search_worker.suggest import suggest, trial_seed

optuna.logging.set_verbosity(optuna.logging.ERROR)

# Key order on purpose not sorted: the sampler orders the space itself.
SPACE: dict[str, Any] = {
    "optimizer": {"distribution": "choice", "values": ["sgd", "adam", "rmsprop"]},
    "lr": {"distribution": "log_uniform", "low": 1e-5, "high": 1},
    "layers": {"distribution": "int", "low": 1, "high": 4},
    "dropout": {"distribution": "uniform", "low": 0, "high": 0.5},
    "width": {"distribution": "int", "low": 8, "high": 512, "log": True},
}
# The same dimensions as a researcher using Optuna would declare them, in sorted order.
OPTUNA_SPACE = {
    "dropout": FloatDistribution(0, 0.5),
    "layers": IntDistribution(1, 4),
    "lr": FloatDistribution(1e-5, 1, log=True),
    "optimizer": CategoricalDistribution(["sgd", "adam", "rmsprop"]),
    "width": IntDistribution(8, 512, log=True),
}


def objective(params: dict[str, Any]) -> float:
    """A deterministic toy loss with a clear optimum, so TPE has something to model."""
    return (
        (math.log10(params["lr"]) + 2.5) ** 2
        + (params["layers"] - 3) ** 2 * 0.1
        + (params["dropout"] - 0.2) ** 2
        + (0.0 if params["optimizer"] == "adam" else 0.3)
        + abs(math.log2(params["width"]) - 7) * 0.05
    )


def request(strategy: str, trial: int, history: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "space": copy.deepcopy(SPACE),
        "goal": "minimize",
        "seed": 7,
        "trial": trial,
        "history": copy.deepcopy(history),
        **extra,
    }


def run_sweep(strategy: str, trials: int, **extra: Any) -> list[dict[str, Any]]:
    """A sequential sweep: each trial suggested from the ones before it, then completed."""
    history: list[dict[str, Any]] = []
    for n in range(1, trials + 1):
        params = suggest(request(strategy, n, history, **extra))["params"]
        value = objective(params)
        record = {"trial": n, "params": params, "state": "complete", "value": value, "intermediate": []}
        history.append(record)
    return history


def hand_driven(sampler: optuna.samplers.BaseSampler, history: list[dict[str, Any]]) -> dict[str, Any]:
    """What Optuna itself suggests next after these trials, asked through its own ask-and-tell API."""
    study = optuna.create_study(sampler=sampler, direction="minimize")
    for record in history:
        state = {
            "complete": TrialState.COMPLETE,
            "pruned": TrialState.PRUNED,
            "running": TrialState.RUNNING,
            "failed": TrialState.FAIL,
        }[record["state"]]
        study.add_trial(
            create_trial(
                state=state,
                params=record["params"],
                distributions=OPTUNA_SPACE,
                value=record["value"] if state in (TrialState.COMPLETE, TrialState.PRUNED) else None,
                intermediate_values=dict(record["intermediate"]),
            )
        )
    return study.ask(OPTUNA_SPACE).params


def assert_inside(test: unittest.TestCase, space: dict[str, Any], params: dict[str, Any]) -> None:
    test.assertEqual(set(params), set(space))
    for name, spec in space.items():
        value = params[name]
        if spec["distribution"] == "choice":
            test.assertIn(json.dumps(value), [json.dumps(v) for v in spec["values"]], name)
            continue
        if spec["distribution"] == "int":
            test.assertIs(type(value), int, name)
        else:
            test.assertIs(type(value), float, name)
        test.assertGreaterEqual(value, spec["low"], name)
        test.assertLessEqual(value, spec["high"], name)


class Determinism(unittest.TestCase):
    def test_the_same_request_and_results_give_the_same_suggestions(self) -> None:
        for strategy in ("random", "sobol", "tpe"):
            with self.subTest(strategy=strategy):
                self.assertEqual(run_sweep(strategy, 14), run_sweep(strategy, 14))

    def test_the_order_of_the_space_keys_does_not_matter(self) -> None:
        history = run_sweep("tpe", 12)
        reordered = request("tpe", 13, history)
        reordered["space"] = dict(reversed(list(reordered["space"].items())))
        self.assertEqual(suggest(reordered), suggest(request("tpe", 13, history)))

    def test_another_seed_gives_other_suggestions(self) -> None:
        for strategy in ("random", "sobol", "tpe"):
            with self.subTest(strategy=strategy):
                self.assertNotEqual(run_sweep(strategy, 3), run_sweep(strategy, 3, seed=8))

    def test_trials_of_one_sweep_differ(self) -> None:
        for strategy in ("random", "sobol"):
            points = [json.dumps(r["params"], sort_keys=True) for r in run_sweep(strategy, 16)]
            self.assertEqual(len(set(points)), 16, strategy)


class Bounds(unittest.TestCase):
    def test_every_value_lies_inside_its_distribution(self) -> None:
        for strategy in ("random", "sobol", "tpe"):
            with self.subTest(strategy=strategy):
                for record in run_sweep(strategy, 24):
                    assert_inside(self, SPACE, record["params"])

    def test_narrow_and_extreme_spaces(self) -> None:
        space = {
            "a": {"distribution": "uniform", "low": -1e-9, "high": 1e-9},
            "b": {"distribution": "log_uniform", "low": 1e-300, "high": 1e300},
            "c": {"distribution": "int", "low": -3, "high": -2},
            "d": {"distribution": "int", "low": 1, "high": 2, "log": True},
            "e": {"distribution": "choice", "values": ["only"]},
        }
        for strategy in ("random", "sobol", "tpe"):
            history: list[dict[str, Any]] = []
            for n in range(1, 15):
                params = suggest({**request(strategy, n, history), "space": space})["params"]
                assert_inside(self, space, params)
                history.append({"trial": n, "params": params, "state": "complete", "value": float(n % 5)})


class Choices(unittest.TestCase):
    VALUES: list[Any] = [1, True, 1.5, None, "1", [1, 2], {"depth": 2, "act": "relu"}]

    def test_values_optuna_cannot_hold_are_chosen_and_fed_back(self) -> None:
        space = {"x": {"distribution": "choice", "values": self.VALUES}}
        for strategy in ("random", "sobol", "tpe"):
            history: list[dict[str, Any]] = []
            seen = set()
            for n in range(1, 31):
                params = suggest({**request(strategy, n, history), "space": space})["params"]
                assert_inside(self, space, params)
                seen.add(json.dumps(params["x"], sort_keys=True))
                history.append({"trial": n, "params": params, "state": "complete", "value": float(n % 3)})
            # 1 and true are two choices, not one (Optuna alone would merge them).
            self.assertGreaterEqual(len(seen), 5, strategy)

    def test_a_history_value_that_is_no_choice_is_refused(self) -> None:
        space = {"x": {"distribution": "choice", "values": [1, 2]}}
        history = [{"trial": 1, "params": {"x": True}, "state": "complete", "value": 1.0}]
        with self.assertRaises(InvalidRequest):
            suggest({**request("tpe", 2, history), "space": space})


class History(unittest.TestCase):
    def test_nan_and_missing_objectives_count_as_failed_and_inf_as_a_value(self) -> None:
        # As Optuna's own tell: NaN fails the trial, ±inf is a value (-inf the best one when minimizing).
        history = run_sweep("tpe", 14)
        history[3]["value"] = float("nan")
        history[7]["value"] = None
        history[9]["value"] = float("-inf")
        as_optuna = copy.deepcopy(history)
        for i in (3, 7):
            as_optuna[i]["state"], as_optuna[i]["value"] = "failed", None
        expected = hand_driven(TPESampler(seed=trial_seed(7, 15)), as_optuna)
        self.assertEqual(suggest(request("tpe", 15, history))["params"], expected)

    def test_running_trials_steer_tpe_away_as_optuna_constant_liar_does(self) -> None:
        history = run_sweep("tpe", 12)
        for record in history[-3:]:
            record["state"], record["value"] = "running", None
        expected = hand_driven(TPESampler(seed=trial_seed(7, 13)), history)
        self.assertEqual(suggest(request("tpe", 13, history))["params"], expected)

    def test_history_is_read_in_trial_order(self) -> None:
        history = run_sweep("tpe", 12)
        shuffled = history[6:] + history[:6]
        self.assertEqual(suggest(request("tpe", 13, shuffled)), suggest(request("tpe", 13, history)))

    def test_bad_requests_are_refused_with_the_field(self) -> None:
        cases = {
            "space.lr.low": {"lr": {"distribution": "log_uniform", "low": 0, "high": 1}},
            "space.n.low must be less": {"n": {"distribution": "int", "low": 3, "high": 3}},
            "space.n.low must be an integer": {"n": {"distribution": "int", "low": 1.5, "high": 3}},
            "space.w.low must be at least 1": {
                "w": {"distribution": "int", "low": 0, "high": 8, "log": True}
            },
            "space.c.values": {"c": {"distribution": "choice", "values": []}},
            "space.z.distribution": {"z": {"distribution": "normal", "low": 0, "high": 1}},
        }
        for message, space in cases.items():
            with self.subTest(message), self.assertRaisesRegex(InvalidRequest, message.replace(".", r"\.")):
                suggest({**request("random", 1, []), "space": space})
        with self.assertRaisesRegex(InvalidRequest, "strategy"):
            suggest(request("grid", 1, []))
        with self.assertRaisesRegex(InvalidRequest, "lacks"):
            suggest(request("tpe", 2, [{"trial": 1, "params": {}, "state": "complete", "value": 1.0}]))


class SameAsOptuna(unittest.TestCase):
    def test_random_equals_optunas_random_sampler(self) -> None:
        history = run_sweep("random", 20)
        for n in range(1, 21):
            with self.subTest(trial=n):
                expected = hand_driven(RandomSampler(seed=trial_seed(7, n)), history[: n - 1])
                self.assertEqual(history[n - 1]["params"], expected)

    def test_tpe_equals_optunas_tpe_sampler(self) -> None:
        # Past the 10 startup trials, so TPE's model decides; some trials pruned with intermediate values.
        history = run_sweep("tpe", 14)
        for record in history[2:6]:
            value = record["value"]
            record["state"], record["intermediate"] = "pruned", [[1, value + 1], [2, value + 0.5]]
            record["value"] = value + 0.5
        for n in range(11, 16):
            with self.subTest(trial=n):
                expected = hand_driven(TPESampler(seed=trial_seed(7, n)), history[: n - 1])
                self.assertEqual(suggest(request("tpe", n, history[: n - 1]))["params"], expected)

    def test_tpe_models_after_the_startup_trials(self) -> None:
        # Past the startup trials TPE concentrates near good points: its later trials beat random's.
        tpe = [r["value"] for r in run_sweep("tpe", 40)]
        rand = [r["value"] for r in run_sweep("random", 40)]
        self.assertLess(sorted(tpe[20:])[5], sorted(rand[20:])[5])

    def test_sobol_points_are_scipys_sobol_points_mapped(self) -> None:
        names = sorted(SPACE)
        points = qmc.Sobol(d=len(names), seed=7, scramble=True).random(16)
        for n, record in enumerate(run_sweep("sobol", 16), start=1):
            u = dict(zip(names, points[n - 1]))
            params = record["params"]
            self.assertEqual(params["dropout"], 0.5 * u["dropout"])
            self.assertEqual(params["layers"], 1 + math.floor(u["layers"] * 4))
            self.assertAlmostEqual(math.log(params["lr"]), math.log(1e-5) * (1 - u["lr"]), places=9)
            choices = SPACE["optimizer"]["values"]
            self.assertEqual(params["optimizer"], choices[math.floor(u["optimizer"] * 3)])
            width = math.exp(math.log(7.5) + u["width"] * math.log(512.5 / 7.5))
            self.assertEqual(params["width"], round(width))

    def test_sobol_equals_optunas_qmc_sampler(self) -> None:
        # Optuna's QMCSampler draws its first trial at random, then Sobol point k for its trial k + 2.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = QMCSampler(qmc_type="sobol", scramble=True, seed=7)
        study = optuna.create_study(sampler=sampler)
        for _ in range(17):
            trial = study.ask(OPTUNA_SPACE)
            study.tell(trial, objective(trial.params))
        optunas = [t.params for t in study.trials[1:]]
        self.assertEqual([r["params"] for r in run_sweep("sobol", 16)], optunas)


if __name__ == "__main__":
    unittest.main()
