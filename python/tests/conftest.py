"""Shared fixtures: the command-line binary (to compare with) and a 2-worker LocalCluster."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Small, fast runs everywhere (test machines, tens of milliseconds simulated).
SMALL = ["--machine", "test-2x4", "--duration", "0.05"]


def _find_binary() -> Path:
    """{release,debug}/wakesim in cargo's target directory (`CARGO_TARGET_DIR`, else
    target/), the newer of the two; built with cargo if neither exists."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    if not target.is_absolute():
        target = ROOT / target
    found = [p for p in (target / "release/wakesim", target / "debug/wakesim") if p.exists()]
    if not found:
        subprocess.run(["cargo", "build", "-p", "wakesim"], cwd=ROOT, check=True)
        found = [target / "debug/wakesim"]
    return max(found, key=lambda p: p.stat().st_mtime)


@pytest.fixture(scope="session")
def wakesim_bin() -> Path:
    return _find_binary()


@pytest.fixture(scope="session")
def cli(wakesim_bin):
    """cli(*args, check=True, env=None) -> CompletedProcess of the wakesim binary (text)."""

    def run(*args, check=True, env=None, cwd=None):
        e = dict(os.environ)
        e["WAKESIM_PYTHON"] = sys.executable
        if env:
            e.update(env)
        p = subprocess.run([str(wakesim_bin), *map(str, args)], capture_output=True, text=True, env=e, cwd=cwd)
        if check and p.returncode != 0:
            raise AssertionError(f"wakesim {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}")
        return p

    return run


@pytest.fixture(scope="session")
def client():
    """A real LocalCluster: 2 worker processes, one thread each."""
    from dask.distributed import Client, LocalCluster
    import logging

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster, set_as_default=False) as c:
        yield c
