"""A checkpoint file larger than the part size goes in parts (ASSAY_UPLOAD_PART_BYTES, 64 MiB by default,
1 MiB here), up to max_upload_workers (SERVICE_MAX_UPLOAD_WORKERS) of them at once, and comes back whole.
The service's presigned URLs point at a recording proxy in front of it (ASSAY_PUBLIC_URL), which sees
each PUT."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from conftest import Service, free_port, run_path, run_script

MIB = 1024 * 1024
SIZE = 3 * MIB + 12345  # four parts of 1 MiB, the last a short one


class Recorder:
    """PUTs to /storage/* pass through to the service after a short pause (so pieces sent at once overlap);
    it keeps each one's part number and the most in flight at once."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.parts: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                with recorder.lock:
                    recorder.in_flight += 1
                    recorder.most_in_flight = max(recorder.most_in_flight, recorder.in_flight)
                    part = parse_qs(urlsplit(self.path).query).get("part", ["0"])[0]
                    recorder.parts.append(int(part))
                try:
                    body = self.rfile.read(int(self.headers["content-length"]))
                    time.sleep(0.3)
                    headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                    answer = httpx.put(
                        recorder.upstream + self.path, content=body, headers=headers, timeout=60
                    )
                finally:
                    with recorder.lock:
                        recorder.in_flight -= 1
                self.relay(answer)

            def do_GET(self) -> None:  # downloads come through here too
                self.relay(httpx.get(recorder.upstream + self.path, timeout=60))

            def relay(self, answer: httpx.Response) -> None:
                self.send_response(answer.status_code)
                for name in ("content-type", "etag"):
                    if name in answer.headers:
                        self.send_header(name, answer.headers[name])
                self.send_header("content-length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxied() -> Iterator[tuple[Service, Recorder]]:
    root = Path(tempfile.mkdtemp(prefix="assay-sdk-parts-"))
    service = Service(data_dir=root / "data")
    recorder = Recorder(service.url)
    service.extra_env["ASSAY_PUBLIC_URL"] = recorder.url
    service.start()
    try:
        yield service, recorder
    finally:
        service.stop()
        recorder.close()
        shutil.rmtree(root, ignore_errors=True)


SCRIPT = """
import json, os, shutil, sys
import assay
with assay.init(experiment=sys.argv[1], variation=1) as run:
    os.makedirs("ckpt", exist_ok=True)
    shutil.copy(sys.argv[2], "ckpt/weights.bin")
    asset = run.save_checkpoint("ckpt/")
    loaded = run.load_checkpoint(dest="restored")
    print(json.dumps({"r": run.r, "state": asset["state"], "loaded": str(loaded.resolve())}))
"""


@pytest.mark.parametrize("workers", [3, 1])
def test_a_file_over_the_part_size_goes_in_parts(
    proxied: tuple[Service, Recorder], spool: Path, tmp_path: Path, workers: int
) -> None:
    service, recorder = proxied
    experiment = service.experiment()
    data = (hashlib.sha256(b"seed").digest() * (SIZE // 32 + 1))[:SIZE]
    source = tmp_path / "source.bin"
    source.write_bytes(data)
    env = {
        **service.sdk_env(spool),
        "ASSAY_UPLOAD_PART_BYTES": str(MIB),
        "SERVICE_MAX_UPLOAD_WORKERS": str(workers),
    }
    done = run_script(SCRIPT, env, tmp_path, experiment, str(source))
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["state"] == "ready"
    assert sorted(recorder.parts) == [1, 2, 3, 4], "one PUT per part of 1 MiB"
    # Pieces go max_upload_workers at once: all of them overlap with 3 workers (each PUT is held 0.3 s).
    assert recorder.most_in_flight == min(workers, 4)
    assert (Path(out["loaded"]) / "weights.bin").read_bytes() == data
    asset = service.get("/assets", experiment_id=experiment, kind="checkpoint")["items"][0]
    assert asset["components"]["weights.bin"]["size"] == SIZE
    assert asset["components"]["weights.bin"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert service.get(run_path(experiment, 1, out["r"]))["state"] == "succeeded"


def test_a_bad_part_size_is_refused_at_init(service: Service, spool: Path, tmp_path: Path) -> None:
    experiment = service.experiment()
    env = {**service.sdk_env(spool), "ASSAY_UPLOAD_PART_BYTES": "1000"}
    done = run_script(
        "import assay, sys\nassay.init(experiment=sys.argv[1], variation=1)\n",
        env,
        tmp_path,
        experiment,
        check=False,
    )
    assert done.returncode != 0
    assert "ASSAY_UPLOAD_PART_BYTES must be a whole number of bytes ≥ 1048576" in done.stderr
