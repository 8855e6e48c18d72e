"""python -m assay_search_worker --address HOST:PORT --namespace NS --task-queue QUEUE

Polls the deployment's search queue (`<task queue>-search`) for `suggest_trial` activities until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from .suggest import suggest


@activity.defn(name="suggest_trial")
def suggest_trial(request: dict[str, Any]) -> dict[str, Any]:
    return suggest(request)


async def serve(address: str, namespace: str, task_queue: str) -> None:
    client = await Client.connect(address, namespace=namespace)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # Suggestions are CPU work (TPE fits a model): one thread keeps the worker from starving its poller.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        async with Worker(
            client,
            task_queue=task_queue,
            activities=[suggest_trial],
            activity_executor=pool,
        ):
            print(f"assay-search-worker: polling {task_queue} on {address} ({namespace})", flush=True)
            await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(prog="assay-search-worker")
    parser.add_argument("--address", default=os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"))
    parser.add_argument("--namespace", default=os.environ.get("TEMPORAL_NAMESPACE", "default"))
    parser.add_argument("--task-queue", required=True)
    args = parser.parse_args()
    asyncio.run(serve(args.address, args.namespace, args.task_queue))


if __name__ == "__main__":
    main()
