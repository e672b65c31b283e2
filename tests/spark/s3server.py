"""An S3-compatible server on 127.0.0.1 for tests: moto's ``moto_server`` in a subprocess (the test extra has it).

Nothing leaves the machine: the endpoint, the fake credentials and the region are handed to
pyarrow, either in the URI's query (``s3://bucket/key?endpoint_override=...``) or as the AWS_*
environment variables pyarrow reads.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ACCESS_KEY = "kdump-test-key"
SECRET_KEY = "kdump-test-secret"
REGION = "us-east-1"


@dataclass
class S3Server:
    endpoint: str                   # host:port
    process: subprocess.Popen

    @property
    def query(self) -> str:
        """What an s3:// URI needs after '?' to reach this server (credentials come from the environment)."""
        return f"endpoint_override={self.endpoint}&scheme=http&region={REGION}"

    @property
    def env(self) -> dict[str, str]:
        """The variables pyarrow reads to reach this server when a URI has no query."""
        return {"AWS_ENDPOINT_URL": f"http://{self.endpoint}", "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": REGION, "AWS_EC2_METADATA_DISABLED": "true"}

    def filesystem(self):  # type: ignore[no-untyped-def]
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION,
                                 endpoint_override=self.endpoint, scheme="http", allow_bucket_creation=True)

    def upload(self, local: Path, bucket: str, prefix: str) -> str:
        """Copy a local directory tree to s3://bucket/prefix; returns that URI (without a query)."""
        fs = self.filesystem()
        fs.create_dir(bucket)
        for path in sorted(local.rglob("*")):
            if path.is_file():
                with fs.open_output_stream(f"{bucket}/{prefix}/{path.relative_to(local).as_posix()}") as out:
                    out.write(path.read_bytes())
        return f"s3://{bucket}/{prefix}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)


def moto_server_command() -> str | None:
    found = Path(sys.executable).with_name("moto_server")
    return str(found) if found.exists() else shutil.which("moto_server")


def start_s3_server(log: Path, timeout: float = 60) -> S3Server:
    command = moto_server_command()
    if command is None:
        raise FileNotFoundError("moto_server not found: pip install 'moto[s3]' flask flask-cors (in kdump's test extra)")
    with socket.socket() as sock:               # a free port (moto_server cannot report one it picked)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with open(log, "wb") as out:
        process = subprocess.Popen([command, "-H", "127.0.0.1", "-p", str(port)], stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=dict(os.environ, MOTO_ALLOW_NONEXISTENT_REGION="true"))
    server = S3Server(f"127.0.0.1:{port}", process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"moto_server exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"http://{server.endpoint}/moto-api/", timeout=2).close()
            return server
        except OSError:
            time.sleep(0.2)
    server.stop()
    raise TimeoutError(f"moto_server did not answer within {timeout} s")
