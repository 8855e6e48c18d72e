"""python -m assay_search_worker --address HOST:PORT --namespace NS --task-queue QUEUE

Polls the deployment's search queue (`<task queue>-search`) for `suggest_trial` activities until SIGTERM
or SIGINT. Settings may come from the environment instead: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and
ASSAY_SEARCH_TASK_QUEUE.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from .suggest import Suggestion, suggest


@activity.defn(name="suggest_trial")
def suggest_trial(request: dict[str, Any]) -> Suggestion:
    try:
        return suggest(request)
    except ValueError as error:
        # The same request fails the same way every time: the workflow hears it at once instead of retrying.
        raise ApplicationError(str(error), type="InvalidSuggestRequest", non_retryable=True) from error


async def _watch_parent(parent_pid: int, stop: asyncio.Event) -> None:
    # Reparented (the parent died, even by SIGKILL): nobody would ever stop this worker otherwise.
    while not stop.is_set():
        if os.getppid() != parent_pid:
            print(f"assay-search-worker: parent {parent_pid} is gone; stopping", flush=True)
            stop.set()
        await asyncio.sleep(1)


async def serve(
    address: str, namespace: str, task_queue: str, threads: int, parent_pid: int | None
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    watch = asyncio.create_task(_watch_parent(parent_pid, stop)) if parent_pid else None
    client = await Client.connect(address, namespace=namespace)
    # Suggestions are CPU work (TPE fits a model) in threads, so the poller never starves; more threads only
    # help while NumPy releases the GIL, and more processes (replicas) scale it further.
    with ThreadPoolExecutor(max_workers=threads) as pool:
        async with Worker(
            client,
            task_queue=task_queue,
            activities=[suggest_trial],
            activity_executor=pool,
            max_concurrent_activities=threads,
        ):
            print(f"assay-search-worker: polling {task_queue} in {namespace} on {address}", flush=True)
            await stop.wait()
    if watch:
        watch.cancel()
    print("assay-search-worker: stopped", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="assay-search-worker")
    parser.add_argument("--address", default=os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"))
    parser.add_argument("--namespace", default=os.environ.get("TEMPORAL_NAMESPACE", "default"))
    parser.add_argument("--task-queue", default=os.environ.get("ASSAY_SEARCH_TASK_QUEUE"))
    parser.add_argument("--threads", type=int, default=1, help="suggestions computed at once")
    parser.add_argument("--parent-pid", type=int, help="exit once this process (our starter) is gone")
    args = parser.parse_args()
    if not args.task_queue:
        parser.error("--task-queue (or ASSAY_SEARCH_TASK_QUEUE) is required: the deployment's <queue>-search")
    try:
        threads = max(1, args.threads)
        asyncio.run(serve(args.address, args.namespace, args.task_queue, threads, args.parent_pid))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
