"""A real training script on the Python SDK: an MLP on scikit-learn's bundled digits (no download), trained
epoch by epoch, its hyperparameters read from the run's config, per-epoch metrics logged, a checkpoint
saved, and a run that has a checkpoint in its chain resuming from it. The SDK version of the sweeps
benchmark's task (bench/sweeps/train_digits.py): the same data (the 1,797 digits enlarged five-fold by
one-pixel shifts, split 80/20 with a fixed seed), the same model and the same metrics (val_loss, val_acc).

Under `assay run` (what a sweep's trials and managed runs are):

    assay run --experiment $E --variation 1 -- python examples/train_digits_sdk.py

or on its own, creating a run of a variation:

    python examples/train_digits_sdk.py --experiment $E --variation 1

A new run starts from scratch; to continue from where another run stopped, say which (a run number, N.R, or
"latest": the run of the variation holding its newest checkpoint):

    assay run --experiment $E --variation 1 --resume-from 3 -- python examples/train_digits_sdk.py
    python examples/train_digits_sdk.py --experiment $E --variation 1 --resume-from latest

Config keys (the variation's YAML; defaults below): lr, hidden, alpha, batch_size, epochs, seed, and
checkpoint_every (epochs between checkpoints; 0, the default: only at the end and when stopped). A cancel or
an early stop arrives as assay.RunCancelled: the script saves a checkpoint of the epochs done, then stops.
Needs numpy and scikit-learn (requirements-test-tools.txt has them).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

import assay

DEFAULTS: dict[str, Any] = {
    "lr": 0.001,
    "hidden": 64,
    "alpha": 0.0001,
    "batch_size": 64,
    "epochs": 20,
    "seed": 0,
    "checkpoint_every": 0,
}


def load_data(subset: Optional[int] = None) -> tuple[Any, Any, Any, Any]:
    """Train and validation arrays: the digits, shifted one pixel each way, scaled to [0, 1]."""
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = digits.images
    shifted = [images] + [np.roll(images, s, axis=a) for a in (1, 2) for s in (-1, 1)]
    x = np.concatenate(shifted).reshape(-1, 64) / 16.0
    y = np.tile(digits.target, len(shifted))
    if subset is not None:
        x, y = x[:subset], y[:subset]
    stratify = y if subset is None else None
    split = train_test_split(x, y, test_size=0.2, random_state=0, stratify=stratify)
    return split[0], split[1], split[2], split[3]


def save(run: assay.Run, model: Any, epoch: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.pkl"
        path.write_bytes(pickle.dumps({"model": model, "epoch": epoch}))
        run.save_checkpoint(path, name=f"epoch-{epoch}")


def main(argv: list[str]) -> int:
    import numpy as np
    from sklearn.metrics import log_loss
    from sklearn.neural_network import MLPClassifier

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--experiment", help="outside `assay run`: the experiment")
    parser.add_argument("--variation", type=int, help="outside `assay run`: the variation")
    parser.add_argument(
        "--resume-from", help="outside `assay run`: resume from run R, N.R, or latest (default: start afresh)"
    )
    parser.add_argument("--subset", type=int, help="train on the first N samples only (for tests)")
    args = parser.parse_args(argv)

    run = assay.init(experiment=args.experiment, variation=args.variation, resume_from=args.resume_from)
    with run:
        params = {**DEFAULTS, **{k: v for k, v in run.config.items() if k in DEFAULTS and v is not None}}
        x_train, x_val, y_train, y_val = load_data(args.subset)
        classes = np.arange(10)
        model = MLPClassifier(
            hidden_layer_sizes=(int(params["hidden"]),),
            learning_rate_init=float(params["lr"]),
            alpha=float(params["alpha"]),
            batch_size=int(params["batch_size"]),
            random_state=int(params["seed"]),
        )
        done = 0
        resumed = run.load_checkpoint()
        if resumed is not None:
            state = pickle.loads(Path(resumed).read_bytes())
            model, done = state["model"], int(state["epoch"])
            print(f"resuming after epoch {done}", flush=True)
        every = int(params["checkpoint_every"])
        try:
            for epoch in range(done + 1, int(params["epochs"]) + 1):
                model.partial_fit(x_train, y_train, classes=classes)
                proba = model.predict_proba(x_val)
                run.log(
                    {
                        "val_loss": float(log_loss(y_val, proba, labels=classes)),
                        "val_acc": float(np.mean(classes[proba.argmax(axis=1)] == y_val)),
                        "train_loss": float(model.loss_),
                    },
                    step=epoch,
                )
                done = epoch
                if every and epoch % every == 0:
                    save(run, model, epoch)
        except assay.RunCancelled:
            if done:
                save(run, model, done)  # a later run of the chain picks up from here
            raise
        if not every or done % every != 0:
            save(run, model, done)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
