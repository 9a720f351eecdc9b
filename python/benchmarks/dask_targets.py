"""Measures the Dask path's targets (docs/python.md, "Overhead"):

1. overhead per task: 40 trivial runs as Dask tasks on a running LocalCluster, against the same
   40 runs in-process one after the other (both save every run in --out the same way);
2. 40 small runs (~0.3 s each) on LocalCluster(2 workers) against the same 40 run serially
   in-process (`compare --jobs 1`).

    .venv/bin/python python/benchmarks/dask_targets.py
"""

import json
import logging
import os
import shutil
import tempfile
import time

from dask.distributed import Client, LocalCluster

import wakesim
from wakesim import _dask, _native
from wakesim._sweep import compare_args


def fresh(base, name):
    d = os.path.join(base, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


def runs_of(d):
    out = {}
    for root, _, files in os.walk(os.path.join(d, "runs")):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                out[os.path.relpath(os.path.join(root, f), d)] = fh.read()
    return out


def serial(args):
    """Every pending run of the experiment in this process, one after the other."""
    plan = json.loads(_native.compare_plan(args))
    t = time.perf_counter()
    for i in plan["pending"]:
        _native.compare_run(args, i)
    return time.perf_counter() - t, len(plan["pending"])


def on_cluster(client, args):
    plan = json.loads(_native.compare_plan(args))
    t = time.perf_counter()
    _dask.run_pending(client, args, plan["pending"], progress=False)
    return time.perf_counter() - t, len(plan["pending"])


def main():
    base = tempfile.mkdtemp(prefix="wakesim-dask-targets-")
    # 40 trivial runs: 2 variants x 20 seeds of a 1-loop hackbench on the smallest machine.
    trivial = dict(variants={"sh": "+SHARED_RUNQ"}, runs=20, machine="test-smt2", duration=0.01)
    # 40 small runs of ~0.3 s: 2 variants x 2 points x 10 seeds.
    small = dict(grid={"g": [2, 3]}, variants={"sh": "+SHARED_RUNQ"}, runs=10, machine="test-2x4", duration=5)
    small_cmd = "hackbench -g {g} -l 1200"
    kw = dict(n_workers=None, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR)
    rows = []

    s_t, n = serial(compare_args("hackbench -g 1 -l 1", out=fresh(base, "t0"), **trivial))
    for workers in (1, 2):
        kw["n_workers"] = workers
        with LocalCluster(**kw) as cluster, Client(cluster, set_as_default=False) as c:
            c.run(lambda: __import__("wakesim"))  # workers import the package once, as a real sweep's first task would
            d_t, n2 = on_cluster(c, compare_args("hackbench -g 1 -l 1", out=fresh(base, f"t{workers}"), **trivial))
            assert n2 == n == 40
            per = (d_t * workers - s_t) / n
            rows.append(f"| {n} trivial runs | in-process serial {s_t:.2f} s | LocalCluster({workers} worker{'s' if workers > 1 else ''}) {d_t:.2f} s | overhead per task {1000 * per:.1f} ms |")

    s_t, n = serial(compare_args(small_cmd, out=fresh(base, "s0"), **small))
    kw["n_workers"] = 2
    t0 = time.perf_counter()
    with LocalCluster(**kw) as cluster, Client(cluster, set_as_default=False) as c:
        start = time.perf_counter() - t0
        d_t, n2 = on_cluster(c, compare_args(small_cmd, out=fresh(base, "s2"), **small))
    assert n2 == n == 40
    rows.append(f"| {n} small runs ({s_t / n:.2f} s each) | in-process serial {s_t:.2f} s | LocalCluster(2 workers) {d_t:.2f} s (+{start:.1f} s to start it) | {d_t / s_t:.2f}x serial ({(d_t + start) / s_t:.2f}x with start-up) |")
    for a, b in [("s0", "s2"), ("t0", "t1"), ("t0", "t2")]:  # the same bytes either way
        assert runs_of(os.path.join(base, a)) == runs_of(os.path.join(base, b)), (a, b)
    print(f"cores: {_dask.machine_cores()}, wakesim {wakesim.__version__}")
    print("\n".join(rows))
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
