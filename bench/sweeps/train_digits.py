"""The sweep benchmark's training task: an MLP on scikit-learn's bundled digits, trained epoch by epoch.

The 1,797 8×8 digits are enlarged five-fold (each image as it is and shifted one pixel up, down, left and
right: 8,985 samples), split 80/20 into train and validation with a fixed seed, and fed to an
MLPClassifier (one hidden layer) through partial_fit, one pass over the training set per epoch. After each
epoch it logs {"step": epoch, "val_loss": …, "val_acc": …, "timestamp": …} as one JSON line.

Hyperparameters (lr, hidden, alpha, batch_size, epochs, seed) come from, later ones winning: the defaults,
`config_json` of the JSON file $ASSAY_CONFIG_FILE (what `assay run` writes), and the flags. Metrics go to
$ASSAY_METRICS_FILE, or to --metrics-file (`-` for stdout). SIGTERM ends it at once with status 143.

    python train_digits.py --lr 0.003 --hidden 64 --alpha 1e-4 --batch-size 64 --epochs 20 --metrics-file -
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import Any, Callable, Iterator, TextIO

DEFAULTS: dict[str, Any] = {
    "lr": 0.001,
    "hidden": 64,
    "alpha": 0.0001,
    "batch_size": 64,
    "epochs": 20,
    "seed": 0,
}


def load_data(subset: int | None = None) -> tuple[Any, Any, Any, Any]:
    """Train and validation arrays: the digits, shifted one pixel each way, scaled to [0, 1]."""
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = digits.images
    # np.roll wraps a border column or row around; the digits' borders are (nearly) blank, so it is a shift.
    shifted = [images] + [np.roll(images, s, axis=a) for a in (1, 2) for s in (-1, 1)]
    x = np.concatenate(shifted).reshape(-1, 64) / 16.0
    y = np.tile(digits.target, len(shifted))
    if subset is not None:
        x, y = x[:subset], y[:subset]
    # A fixed, stratified split (a small --subset may lack a class, so it is split plainly).
    stratify = y if subset is None else None
    return tuple(train_test_split(x, y, test_size=0.2, random_state=0, stratify=stratify))


def train(
    params: dict[str, Any], data: tuple[Any, Any, Any, Any]
) -> Iterator[dict[str, float]]:
    """Yields {"step", "val_loss", "val_acc"} after each epoch, epochs counted from 1."""
    import numpy as np
    from sklearn.metrics import log_loss
    from sklearn.neural_network import MLPClassifier

    x_train, x_val, y_train, y_val = data
    classes = np.arange(10)
    model = MLPClassifier(
        hidden_layer_sizes=(int(params["hidden"]),),
        learning_rate_init=float(params["lr"]),
        alpha=float(params["alpha"]),
        batch_size=int(params["batch_size"]),
        random_state=int(params["seed"]),
    )
    for epoch in range(1, int(params["epochs"]) + 1):
        model.partial_fit(x_train, y_train, classes=classes)
        proba = model.predict_proba(x_val)
        yield {
            "step": epoch,
            "val_loss": float(log_loss(y_val, proba, labels=classes)),
            "val_acc": float(np.mean(classes[proba.argmax(axis=1)] == y_val)),
        }


def read_params(argv: list[str]) -> tuple[dict[str, Any], argparse.Namespace]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lr", type=float)
    parser.add_argument("--hidden", type=int)
    parser.add_argument("--alpha", type=float)
    parser.add_argument("--batch-size", type=int, dest="batch_size")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--subset", type=int, help="train on the first N samples only (for tests)")
    parser.add_argument("--config", default=os.environ.get("ASSAY_CONFIG_FILE"))
    parser.add_argument("--metrics-file", default=os.environ.get("ASSAY_METRICS_FILE"))
    args = parser.parse_args(argv)
    params = dict(DEFAULTS)
    if args.config:
        with open(args.config, encoding="utf-8") as f:
            config = json.load(f).get("config_json") or {}
        params.update({k: config[k] for k in DEFAULTS if config.get(k) is not None})
    params.update({k: getattr(args, k) for k in DEFAULTS if getattr(args, k) is not None})
    return params, args


def open_metrics(target: str | None) -> TextIO:
    if target is None or target == "-":
        return sys.stdout
    return open(target, "a", buffering=1, encoding="utf-8")  # line-buffered: each epoch's line at once


def main(argv: list[str], on_epoch: Callable[[dict[str, float]], None] | None = None) -> int:
    # A stop (early stopping, a cancel) is SIGTERM to the process group: leave now, between two batches.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    params, args = read_params(argv)
    out = open_metrics(args.metrics_file)
    data = load_data(args.subset)
    for record in train(params, data):
        out.write(json.dumps({**record, "timestamp": time.time()}) + "\n")
        out.flush()
        if on_epoch:
            on_epoch(record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
