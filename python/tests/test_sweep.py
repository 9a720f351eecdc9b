"""wakesim.sweep and `compare --dask` on real Dask clusters: equality with `compare --jobs`,
resume, a killed worker, errors."""

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest

import wakesim
from wakesim import _native

CMD = "hackbench -g {g} -l 20"
OPTS = dict(grid={"g": [1, 2]}, variants={"sh": "+SHARED_RUNQ"}, runs=2, machine="test-2x4", duration=0.05)
CLI_ARGS = ["--machine", "test-2x4", "--variant", "sh=+SHARED_RUNQ", "--sweep", "g=1,2", "--runs", "2",
            "--duration", "0.05"]
# Everything compare writes that depends on the results (experiment.json and commands.txt also
# record the command line, which differs).
RESULT_FILES = ["results.csv", "summary.csv", "results.json", "summary.json"]


def run_files(d: Path):
    return sorted(p.relative_to(d / "runs").as_posix() for p in (d / "runs").rglob("*") if p.is_file())


def assert_same_results(a: Path, b: Path):
    for f in RESULT_FILES:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert run_files(a) == run_files(b)
    for f in run_files(a):
        assert (a / "runs" / f).read_bytes() == (b / "runs" / f).read_bytes(), f


def test_sweep_on_local_cluster_equals_compare_jobs(client, cli, tmp_path):
    s = wakesim.sweep(CMD, out=tmp_path / "d1", client=client, progress=False, **OPTS)
    ref = cli("compare", *CLI_ARGS, "--jobs", "2", "--out", tmp_path / "d2", "--", *CMD.split())
    assert s.text == ref.stdout == str(s)
    assert_same_results(tmp_path / "d1", tmp_path / "d2")
    # The DataFrame: one row per run, compare's CSV columns.
    assert isinstance(s.df, pl.DataFrame) and s.df.height == 8
    assert s.df.columns == pl.read_csv(tmp_path / "d2" / "results.csv").columns
    assert s.df.columns[:7] == ["machine", "kernel", "variant", "features", "features_on", "workload", "g"]
    assert s.df.group_by(["variant", "g", "run"]).len()["len"].to_list() == [1] * 8
    assert sorted(s.df["variant"].unique().to_list()) == ["baseline", "sh"]
    assert s.summary.height == 4
    assert s.experiment["experiment"]["runs"] == 2
    assert "8 runs" in repr(s)
    # The tables, each style alone, as the command line prints them.
    for fmt in ["mmtests", "normalized", "percentiles", "schedstat", "breakdown"]:
        t = s.tables(fmt)
        ref_t = cli("compare", *CLI_ARGS, "--format", fmt, "--out", tmp_path / "d2", "--", *CMD.split()).stdout
        assert t == ref_t and t
    assert s.tables(["mmtests", "normalized"]) == s.tables("mmtests,normalized")
    assert s.tables() == s.text
    html = s.report()
    assert html == str(tmp_path / "d1" / "report.html") and "<html" in Path(html).read_text()[:2000].lower()
    other = s.report(tmp_path / "r.html")
    assert Path(other).exists()


def test_resume_runs_nothing(client, tmp_path):
    d = tmp_path / "d"
    first = wakesim.sweep(CMD, out=d, client=client, progress=False, **OPTS)
    stamps = {f: (d / "runs" / f).stat().st_mtime_ns for f in run_files(d)}

    class NoCluster:  # a client that must not be used: nothing is pending
        def map(self, *a, **k):
            raise AssertionError("a run was submitted")

    again = wakesim.sweep(CMD, out=d, client=NoCluster(), progress=False, **OPTS)
    assert again.text == first.text
    assert {f: (d / "runs" / f).stat().st_mtime_ns for f in run_files(d)} == stamps
    # Two runs lost: only they run again, with the same bytes.
    lost = run_files(d)[:2]
    saved = {f: (d / "runs" / f).read_bytes() for f in lost}
    for f in lost:
        (d / "runs" / f).unlink()
    plan = json.loads(_native.compare_plan(again.args))
    assert len(plan["pending"]) == 2 and plan["total"] == 8
    third = wakesim.sweep(CMD, out=d, client=client, progress=False, **OPTS)
    assert third.text == first.text
    assert {f: (d / "runs" / f).read_bytes() for f in lost} == saved


def test_another_experiment_in_out_is_refused(client, tmp_path):
    wakesim.sweep(CMD, out=tmp_path / "d", client=client, progress=False, **OPTS)
    with pytest.raises(wakesim.WakesimError, match="holds another experiment"):
        wakesim.sweep(CMD, out=tmp_path / "d", client=client, progress=False, **{**OPTS, "duration": 0.04})
    with pytest.raises(wakesim.WakesimError, match="holds another experiment"):
        wakesim.sweep(CMD, out=tmp_path / "d", client=client, progress=False, **{**OPTS, "runs": 1})


def test_more_runs_in_out_add_only_the_new_seeds(client, tmp_path):
    wakesim.sweep(CMD, out=tmp_path / "d", client=client, progress=False, **OPTS)
    kept = tmp_path / "d" / "runs" / "sh" / "g=2" / "run-1.json"
    before = kept.read_bytes()
    r = wakesim.sweep(CMD, out=tmp_path / "d", client=client, progress=False, **{**OPTS, "runs": 3})
    assert r.df.height == 12 and kept.read_bytes() == before


def test_sweep_with_client_none_and_address(tmp_path, client):
    # client=None: a LocalCluster sized to this machine, started and closed by sweep.
    a = wakesim.sweep("hackbench -g 1 -l 20", runs=2, machine="test-smt2", duration=0.05, out=tmp_path / "a",
                      progress=False)
    assert a.df.height == 2
    # A scheduler address: sweep connects, runs, disconnects.
    b = wakesim.sweep("hackbench -g 1 -l 20", runs=2, machine="test-smt2", duration=0.05, out=tmp_path / "b",
                      client=client.scheduler.address, progress=False)
    assert_same_results(tmp_path / "a", tmp_path / "b")


def test_progress_bar(client, tmp_path, capsys):
    wakesim.sweep(CMD, out=tmp_path / "d", client=client, **OPTS)
    out = capsys.readouterr().out
    assert "8/8 runs" in out and "100%" in out


def test_unreachable_scheduler(tmp_path, cli):
    addr = "tcp://127.0.0.1:1"
    t = time.monotonic()
    with pytest.raises(wakesim.WakesimError, match="tcp://127.0.0.1:1"):
        wakesim.sweep(CMD, out=tmp_path / "d", client=addr, progress=False, **OPTS)
    assert time.monotonic() - t < 30
    p = cli("compare", *CLI_ARGS, "--out", tmp_path / "e", "--dask", addr, "--", *CMD.split(), check=False)
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wakesim: error: ") and addr in lines[0], p.stderr


def test_sweep_argument_errors(tmp_path):
    for kw, word in [(dict(runs="3"), "runs"), (dict(grid=[1, 2]), "grid"), (dict(grid={"g": []}), "grid"),
                     (dict(variants="sh"), "variants"), (dict(seed=1.5), "seed"), (dict(machine="nope"), "nope"),
                     (dict(variants={"sh": "+NOPE"}), "NOPE"), (dict(runs=0), "--runs"), (dict(format=3), "format"),
                     (dict(format="nope"), "nope")]:
        with pytest.raises(wakesim.WakesimError, match=word):
            wakesim.sweep(CMD, out=tmp_path / "x", progress=False, **{**OPTS, **kw})


def test_cli_dask_local(cli, tmp_path):
    d1, d2 = tmp_path / "d1", tmp_path / "d2"
    p = cli("compare", *CLI_ARGS, "--out", d1, "--dask", "local", "--", *CMD.split())
    ref = cli("compare", *CLI_ARGS, "--jobs", "2", "--out", d2, "--", *CMD.split())
    assert p.stdout == ref.stdout
    assert "8/8 runs" in p.stderr  # the progress bar, on standard error
    assert_same_results(d1, d2)
    argv = json.loads((d1 / "experiment.json").read_text())["argv"]
    assert argv[argv.index("--dask") + 1] == "local" and argv[:2] == ["wakesim", "compare"]
    # Resumed: nothing left to run, so the cluster is not even started.
    again = cli("compare", *CLI_ARGS, "--out", d1, "--dask", "local", "--", *CMD.split())
    assert again.stdout == ref.stdout and "runs" not in again.stderr.replace("8 runs", "")


def test_cli_dask_without_the_package(cli, tmp_path):
    p = cli("compare", *CLI_ARGS, "--out", tmp_path / "d", "--dask", "local", "--", *CMD.split(), check=False,
            env={"WAKESIM_PYTHON": "/nonexistent/python"})
    assert p.returncode == 2 and "WAKESIM_PYTHON" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_runner_error_file(tmp_path):
    """The runner's own contract: one line in the error file, exit 2, nothing on stderr."""
    import subprocess

    err = tmp_path / "err"
    p = subprocess.run([sys.executable, "-m", "wakesim.dask_compare", "--error-file", err, "local", "--",
                        "--machine", "nope", "--out", tmp_path / "d", "--", "hackbench"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr == "" and p.stdout == ""
    assert err.read_text().count("\n") == 1 and "unknown machine 'nope'" in err.read_text()


def test_survives_a_killed_worker(tmp_path):
    """A worker process killed while it runs a task: Dask runs the task again elsewhere; every
    run is saved exactly once and the results equal an undisturbed compare's."""
    import logging

    from dask.distributed import Client, LocalCluster

    cmd = "hackbench -g {g} -l 1000"
    opts = dict(grid={"g": [2]}, variants={"sh": "+SHARED_RUNQ"}, runs=4, machine="test-2x4", duration=1.0)
    d = tmp_path / "d"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster, set_as_default=False) as c:
        pids = c.run(os.getpid)
        result, error = [], []

        def go():
            try:
                result.append(wakesim.sweep(cmd, out=d, client=c, progress=False, **opts))
            except BaseException as e:  # pragma: no cover - reported below
                error.append(e)

        t = threading.Thread(target=go)
        t.start()
        victim = None
        deadline = time.monotonic() + 60
        while victim is None and time.monotonic() < deadline and t.is_alive():
            done = len(list((d / "runs").rglob("run-*.json"))) if (d / "runs").exists() else 0
            busy = {w: ks for w, ks in c.processing().items() if any(str(k).startswith("wakesim-run-") for k in ks)}
            if done >= 1 and busy:
                victim = next(iter(busy))
                os.kill(pids[victim], signal.SIGKILL)
            else:
                time.sleep(0.01)
        t.join(120)
        assert victim is not None, "the sweep finished before a worker could be killed"
        assert not error, error
        assert not t.is_alive()
    s = result[0]
    assert s.df.height == 8
    assert s.df.group_by(["variant", "run"]).len()["len"].to_list() == [1] * 8
    assert not [p for p in (d / "runs").rglob("*") if p.name.endswith(".tmp")]
    # The same experiment without Dask, in-process on one thread.
    ref_args = wakesim._sweep.compare_args(cmd, out=tmp_path / "ref", **{k: v for k, v in opts.items()})
    end = ref_args.index("--")
    ref_text = _native.call("compare", ref_args[:end] + ["--jobs", "1"] + ref_args[end:])
    assert ref_text == s.text
    assert_same_results(d, tmp_path / "ref")
