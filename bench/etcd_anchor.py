"""A throwaway etcd 3.4 member for the benchmarks to measure against.

`EtcdAnchor` starts Debian's `/usr/bin/etcd` as a single member on 127.0.0.1 with two free
ports and a data dir of the caller's choosing (default fsync: every write is durable), waits
until it answers, and stops it again, killing it if it will not stop. `bench.storage` owns one
for the length of a run and talks to it with the `aetcd` client from `bench._etcd_side`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

ETCD_BINARY = "/usr/bin/etcd"
INSTALL_HINT = "etcd 3.4 is the benchmark's anchor; install it with: apt-get install etcd-server"


class EtcdMissing(RuntimeError):
    """No etcd binary here: the anchor cannot run (never skip it silently)."""


def find_etcd() -> str | None:
    """The etcd binary to run: Debian's if present, else one on PATH, else None."""
    if os.access(ETCD_BINARY, os.X_OK):
        return ETCD_BINARY
    return shutil.which("etcd")


def etcd_version(binary: str) -> str:
    """The version line etcd prints about itself, e.g. '3.4.23'."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    for line in out.splitlines():
        if line.startswith("etcd Version:"):
            return line.split(":", 1)[1].strip()
    return out.strip().splitlines()[0] if out.strip() else "unknown"


def free_port() -> int:
    # The kernel picks a free port; the small window before etcd binds it is acceptable here.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EtcdAnchor:
    """One etcd member in `data_dir`, listening on 127.0.0.1 only."""

    def __init__(self, data_dir: Path, binary: str | None = None) -> None:
        found = binary or find_etcd()
        if found is None:
            raise EtcdMissing(INSTALL_HINT)
        self.binary = found
        self.data_dir = Path(data_dir)
        self.client_port = free_port()
        self.peer_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = self.data_dir.parent / "etcd.log"

    @property
    def version(self) -> str:
        return etcd_version(self.binary)

    def start(self, timeout: float = 20.0) -> None:
        client_url = f"http://127.0.0.1:{self.client_port}"
        peer_url = f"http://127.0.0.1:{self.peer_port}"
        args = [
            self.binary,
            "--name", "bench",
            "--data-dir", str(self.data_dir),
            "--listen-client-urls", client_url,
            "--advertise-client-urls", client_url,
            "--listen-peer-urls", peer_url,
            "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", f"bench={peer_url}",
            "--initial-cluster-state", "new",
            # Room for the 100k-object history; the default 2 GiB quota would do, but a full
            # quota would turn into confusing "mvcc: database space exceeded" errors mid-run.
            "--quota-backend-bytes", str(8 << 30),
            "--logger", "zap",
            "--log-level", "warn",
        ]
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        try:
            self.process = subprocess.Popen(args, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        finally:
            log.close()
        self._wait_until_serving(timeout)

    def _wait_until_serving(self, timeout: float) -> None:
        # /health answers once the member has elected itself leader and can commit.
        import urllib.request

        deadline = time.monotonic() + timeout
        url = f"http://127.0.0.1:{self.client_port}/health"
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"etcd exited with code {self.process.returncode}; see {self.log_path}"
                )
            try:
                with urllib.request.urlopen(url, timeout=1.0) as resp:
                    if b'"health":"true"' in resp.read():
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"etcd did not become healthy within {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def __enter__(self) -> EtcdAnchor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
