"""A throw-away PostgreSQL server on localhost, for the many-worker benchmark and its test.

``local_postgres()`` initialises a cluster in a temporary folder (``initdb``, trust
authentication), starts it on a free port (``pg_ctl``), yields its SQLAlchemy URL and stops it
afterwards. PostgreSQL refuses to run as root: as root the server runs as the ``postgres``
user (``runuser``), which Debian's ``postgresql`` package creates. Where a piece is missing
(no ``initdb``, no ``psycopg2``) it raises :class:`PostgresUnavailable` with the reason, which a
test turns into a skip::

    with local_postgres() as url:      # postgresql+psycopg2://postgres@127.0.0.1:PORT/postgres
        optuna.create_study(storage=url)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

SERVER_USER = "postgres"


class PostgresUnavailable(RuntimeError):
    """No local PostgreSQL server can be started here (the message says why)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_server_user(command: list[str]) -> list[str]:
    """``command`` run as :data:`SERVER_USER` when this process is root."""
    if os.geteuid() != 0:
        return command
    if shutil.which("runuser") is None:
        raise PostgresUnavailable("running as root and no runuser to become 'postgres'")
    return ["runuser", "-u", SERVER_USER, "--", *command]


def _check_available() -> tuple[str, str]:
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise PostgresUnavailable(
            "initdb / pg_ctl not on PATH (install Debian's postgresql package)"
        )
    try:
        import psycopg2  # noqa: F401
    except ImportError as error:
        raise PostgresUnavailable(
            "psycopg2 is not installed (pip install condsamplers[bench])"
        ) from error
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam(SERVER_USER)
        except KeyError as error:
            raise PostgresUnavailable(f"running as root and no {SERVER_USER!r} user") from error
    return initdb, pg_ctl


@contextlib.contextmanager
def local_postgres() -> Iterator[str]:
    """Start a PostgreSQL server in a temporary folder; yield its URL; stop and delete it."""
    initdb, pg_ctl = _check_available()
    root = Path(tempfile.mkdtemp(prefix="condsamplers-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, user=SERVER_USER)
    port = _free_port()
    try:
        subprocess.run(
            _as_server_user([initdb, "-D", str(data), "-U", SERVER_USER, "--auth=trust"]),
            check=True,
            capture_output=True,
            text=True,
        )
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        started = subprocess.run(
            _as_server_user(
                [pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"]
            ),
            capture_output=True,
            text=True,
        )
        if started.returncode != 0:
            log = (root / "log").read_text() if (root / "log").exists() else ""
            raise PostgresUnavailable(f"pg_ctl start failed: {started.stderr}{log[-2000:]}")
        yield f"postgresql+psycopg2://{SERVER_USER}@127.0.0.1:{port}/postgres"
    except subprocess.CalledProcessError as error:
        raise PostgresUnavailable(f"initdb failed: {error.stderr[-2000:]}") from error
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                _as_server_user([pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"]),
                capture_output=True,
            )
            time.sleep(0.1)
        shutil.rmtree(root, ignore_errors=True)
