"""wakesim.run and the catalogue: results, options, errors, equality with the command line."""

import json
import threading
import time

import pytest

import wakesim
from conftest import ROOT, SMALL

CMD = "hackbench -g 1 -l 20"


def test_run_result():
    r = wakesim.run(CMD, machine="test-2x4", duration=0.05)
    assert set(r.metric) == {"name", "unit", "value", "higher_is_better"}
    assert r.metric["name"] == "time" and r.metric["higher_is_better"] is False and r.metric["value"] > 0
    assert r.output.startswith("Running in process mode") and r.output in r.text
    assert "--- wakesim statistics" in r.text
    assert isinstance(r.stats, dict) and r.stats
    d = r.to_dict()
    assert d["stats"] == r.stats and d["output"] == r.output and d["metric"] == r.metric
    assert d["machine"] == "test-2x4" and d["command"] == CMD.split() and "engine" in d
    d["metric"]["value"] = -1  # a copy
    assert r.metric["value"] > 0
    assert "hackbench -g 1 -l 20" in repr(r) and "time" in repr(r) and "test-2x4" in repr(r)
    assert str(r) == r.text
    assert r.command_line.startswith("wakesim run --machine test-2x4")


def test_command_as_list_and_options():
    a = wakesim.run(CMD, machine="test-smt2", kernel="v5.19", features="+TTWU_QUEUE_IDLE", seed=3, duration=0.05)
    b = wakesim.run(CMD.split(), machine="test-smt2", kernel="v5.19", features=["+TTWU_QUEUE_IDLE"], seed=3,
                    duration=0.05)
    assert a.to_dict()["stats"] == b.to_dict()["stats"] and a.output == b.output
    assert a["kernel"] == "v5.19" and a["seed"] == 3
    # A leading '-' in a feature spec is a value, not an option.
    c = wakesim.run(CMD, machine="test-smt2", features="-TTWU_QUEUE", duration=0.05)
    assert c.metric["value"] > 0


def _cli_json(cli, tmp_path, args):
    out = tmp_path / "cli.json"
    p = cli("run", *args[:args.index("--")], "--json", out, *args[args.index("--"):])
    return p.stdout, json.loads(out.read_text())


def _no_engine(d):
    return {k: v for k, v in d.items() if k != "engine"}


@pytest.mark.parametrize("opts", [
    dict(machine="test-2x4"),
    dict(machine="test-smt2", kernel="v5.19", features="+TTWU_QUEUE_IDLE", seed=7),
    dict(machine="test-2x4", kernel="v6.5", features="+SHARED_RUNQ", copies=2),
])
def test_equal_to_cli_json(cli, tmp_path, opts):
    r = wakesim.run(CMD, duration=0.05, **opts)
    args = []
    for k, v in opts.items():
        args += [f"--{k}", str(v)]
    stdout, doc = _cli_json(cli, tmp_path, args + ["--duration", "0.05", "--", *CMD.split()])
    assert _no_engine(r.to_dict()) == _no_engine(doc)
    assert r.text == stdout


def test_more_options(tmp_path):
    trace = tmp_path / "t.json"
    out = tmp_path / "r.json"
    r = wakesim.run(CMD, machine="test-2x4", duration=0.05, schedstat=16, trace=trace, trace_window=(0, 1),
                    trace_limit=500, json=out)
    assert "version 16" in r.text
    assert json.loads(trace.read_text())
    assert _no_engine(json.loads(out.read_text())) == _no_engine(r.to_dict())


def test_tasks_and_costs_files(tmp_path):
    costs = tmp_path / "costs.toml"
    costs.write_text("")
    r = wakesim.run(CMD, machine="test-2x4", duration=0.05, costs=costs)
    assert r.metric["value"] > 0


def test_run_releases_the_gil():
    done = []
    t = threading.Thread(target=lambda: done.append(wakesim.run("hackbench -g 2 -l 300", machine="test-2x4")))
    ticks = 0
    t.start()
    while t.is_alive():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert done and ticks > 20  # the main thread kept running while the simulator ran


def test_catalogue():
    ms = wakesim.machines()
    names = [m.name for m in ms]
    assert "xeon-8269cy" in names and "test-2x4" in names
    x = next(m for m in ms if m.name == "xeon-8269cy")
    assert x.cpus == 104 and x.shape == "2x26x2" and x.domains[0] == "SMT"
    ks = {k.name: k for k in wakesim.kernels()}
    assert {"v4.15", "v5.19", "v6.5", "v6.12"} <= set(ks)
    assert "TTWU_QUEUE_IDLE" not in ks["v5.19"].features and "TTWU_QUEUE_IDLE" in ks["v6.12"].features
    fs = {f.name: f for f in wakesim.features()}
    assert fs["SHARED_RUNQ"].description and fs["SHARED_RUNQ"].kind and fs["SHARED_RUNQ"].to_dict()["name"] == "SHARED_RUNQ"


def test_machine_preset_and_file():
    m = wakesim.machine("test-2x4")
    assert m.name == "test-2x4" and m.cpus == 16
    f = wakesim.machine(ROOT / "crates/cli/tests/corpus/lopsided.toml")
    assert f.cpus == 4 and f.name == "lopsided"
    r = wakesim.run(CMD, machine=ROOT / "crates/cli/tests/corpus/lopsided.toml", duration=0.05)
    assert r.metric["value"] > 0


@pytest.mark.parametrize("kwargs, words", [
    (dict(machine="nope"), ["unknown machine", "nope"]),
    (dict(features="+NOPE"), ["unknown feature", "NOPE"]),
    (dict(kernel="v9.9"), ["v9.9"]),
    (dict(seed="x"), ["seed", "expected an integer", "'x'"]),
    (dict(seed=1.5), ["seed", "expected an integer"]),
    (dict(duration="1"), ["duration", "expected a number"]),
    (dict(copies=True), ["copies", "expected an integer"]),
    (dict(features=3), ["features"]),
    (dict(machine=5), ["machine"]),
    (dict(duration=-1), ["duration"]),
    (dict(bogus_option=1), ["--bogus-option"]),
    (dict(command=42), ["command"]),
    (dict(command="no-such-benchmark"), ["no-such-benchmark"]),
    (dict(machine="/nonexistent/m.toml"), ["/nonexistent/m.toml"]),
])
def test_errors(kwargs, words):
    kw = dict(command=CMD, duration=0.05)
    kw.update(kwargs)
    with pytest.raises(wakesim.WakesimError) as e:
        wakesim.run(**kw)
    msg = str(e.value)
    assert isinstance(e.value, ValueError) and "\n" not in msg
    for w in words:
        assert w in msg, msg


def test_machine_errors():
    with pytest.raises(ValueError, match="unknown machine 'nope'"):
        wakesim.machine("nope")
    with pytest.raises(wakesim.WakesimError, match="machine"):
        wakesim.machine(3)


def test_error_matches_cli(cli):
    p = cli("run", "--machine", "nope", check=False)
    with pytest.raises(wakesim.WakesimError) as e:
        wakesim.run(machine="nope")
    assert p.returncode == 2 and p.stderr.strip() == f"wakesim: error: {e.value}"


def test_version():
    assert wakesim.__version__ and wakesim.__version__ == wakesim._native.version()
