"""The sweep benchmark's baselines: Optuna drives the same search as an Assay sweep, two ways.

- inprocess (a, the floor): each trial trains the MLP of train_digits.py in this process, on data loaded once.
- subprocess (b, the shape of a W&B agent or a Katib trial): each trial runs train_digits.py as a child
  process, reads its metrics lines from the child's stdout, reports each to the pruner, and stops a pruned
  trial with SIGTERM.

Same space (space.json, the sweep's), sampler (RandomSampler or TPESampler), pruner (none, or
SuccessiveHalvingPruner with Assay's asha settings: min_resource 1, reduction factor 3) and seed. The
objective is the last epoch's val_acc, maximized. One JSON line per study on stdout:

    python optuna_baselines.py --mode inprocess --sampler tpe --pruner sh --seed 7 --trials 32 --epochs 20
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import optuna

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_digits  # noqa: E402  (beside this file)

optuna.logging.set_verbosity(optuna.logging.WARNING)
HERE = os.path.dirname(os.path.abspath(__file__))


def suggest(trial: optuna.Trial, space: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One point of the space as Assay's search worker reads it (distribution → Optuna's suggest_*)."""
    params: dict[str, Any] = {}
    for name, spec in space.items():
        kind = spec["distribution"]
        if kind in ("uniform", "log_uniform"):
            params[name] = trial.suggest_float(name, spec["low"], spec["high"], log=kind == "log_uniform")
        elif kind == "int":
            params[name] = trial.suggest_int(name, spec["low"], spec["high"], log=bool(spec.get("log")))
        else:
            params[name] = trial.suggest_categorical(name, spec["values"])
    return params


class Study:
    def __init__(self, args: argparse.Namespace) -> None:
        with open(args.space, encoding="utf-8") as f:
            self.space = json.load(f)
        self.args = args
        self.epochs_used = 0
        self.stop_latencies: list[float] = []
        self.starts: list[float] = []  # subprocess: spawn → first metrics line, less one epoch
        self.data = train_digits.load_data() if args.mode == "inprocess" else None

    def objective(self, trial: optuna.Trial) -> float:
        params = {**suggest(trial, self.space), "epochs": self.args.epochs, "seed": 0}
        if self.args.mode == "inprocess":
            return self._inprocess(trial, params)
        return self._subprocess(trial, params)

    def _report(self, trial: optuna.Trial, record: dict[str, float]) -> bool:
        """Reports an epoch; True when the pruner stops the trial."""
        self.epochs_used += 1
        trial.report(record["val_acc"], int(record["step"]))
        return trial.should_prune()

    def _inprocess(self, trial: optuna.Trial, params: dict[str, Any]) -> float:
        value = float("nan")
        for record in train_digits.train(params, self.data):
            value = record["val_acc"]
            if self._report(trial, record):
                raise optuna.TrialPruned()
        return value

    def _subprocess(self, trial: optuna.Trial, params: dict[str, Any]) -> float:
        argv = [sys.executable, os.path.join(HERE, "train_digits.py"), "--metrics-file", "-"]
        for key in ("lr", "hidden", "alpha", "batch_size", "epochs", "seed"):
            argv += [f"--{key.replace('_', '-')}", str(params[key])]
        spawned = time.time()
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, bufsize=1)
        value = float("nan")
        times: list[float] = []
        assert child.stdout is not None
        for line in child.stdout:
            record = json.loads(line)
            times.append(record["timestamp"])
            value = record["val_acc"]
            if self._report(trial, record):
                asked = time.time()
                child.send_signal(signal.SIGTERM)
                child.wait()
                self.stop_latencies.append(time.time() - asked)
                self._start_of(spawned, times)
                raise optuna.TrialPruned()
        if child.wait() != 0:
            raise RuntimeError(f"train_digits.py exited {child.returncode}")
        self._start_of(spawned, times)
        return value

    def _start_of(self, spawned: float, times: list[float]) -> None:
        # The first line comes one epoch after training began: take the next epoch's length off.
        epoch = times[1] - times[0] if len(times) > 1 else 0.0
        if times:
            self.starts.append(times[0] - epoch - spawned)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=["inprocess", "subprocess"], required=True)
    parser.add_argument("--sampler", choices=["random", "tpe"], required=True)
    parser.add_argument("--pruner", choices=["none", "sh"], required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--space", default=os.path.join(HERE, "space.json"))
    args = parser.parse_args()

    sampler = (optuna.samplers.TPESampler if args.sampler == "tpe" else optuna.samplers.RandomSampler)(
        seed=args.seed
    )
    pruner = (
        optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3, min_early_stopping_rate=0)
        if args.pruner == "sh"
        else optuna.pruners.NopPruner()
    )
    started = time.perf_counter()
    runner = Study(args)  # loading the data once is part of the in-process study's time
    study = optuna.create_study(direction="maximize", sampler=sampler, pruner=pruner)
    study.optimize(runner.objective, n_trials=args.trials)
    wall = time.perf_counter() - started
    states = [t.state for t in study.trials]
    print(
        json.dumps(
            {
                "mode": args.mode,
                "sampler": args.sampler,
                "pruner": args.pruner,
                "seed": args.seed,
                "trials": args.trials,
                "epochs": args.epochs,
                "wall_s": wall,
                "best": study.best_value,
                "best_params": study.best_params,
                "trial_epochs": runner.epochs_used,
                "pruned": states.count(optuna.trial.TrialState.PRUNED),
                "stop_s": runner.stop_latencies,
                "start_s": runner.starts,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
