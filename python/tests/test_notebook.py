"""examples/sweep.ipynb runs (nbclient) at a small size and draws its plot."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_sweep_notebook(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    out = tmp_path / "exp"
    # The kernel inherits this environment: a tiny sweep, a headless plot.
    for k, v in {"WAKESIM_NB_MACHINE": "test-2x4", "WAKESIM_NB_CLIENTS": "1,2,4", "WAKESIM_NB_RUNS": "1",
                 "WAKESIM_NB_SECONDS": "1", "WAKESIM_NB_OUT": str(out), "MPLBACKEND": "Agg"}.items():
        monkeypatch.setenv(k, v)
    nb = nbformat.read(ROOT / "examples/sweep.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert (out / "throughput.png").stat().st_size > 5000
    assert (out / "report.html").exists()
    texts = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "mmtests compare" in texts and "shared_runq" in texts and "clients-4" in texts
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
