"""scripts/what-time-follows: the analysis behind docs/results-notes.md's "What SIS_FILTER's run
times follow", run on a hand-made experiment directory whose answers are known."""
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "what-time-follows"


def write_run(d: Path, variant: str, k: int, time: float, wasted_s: float, waits_s: float, scan_s: float = 1.0):
    wake = {"tg_wait": waits_s * 1e9 / 2, "tg_read_wait": waits_s * 1e9 / 4, "rq_lock_spin": waits_s * 1e9 / 4,
            "wakeups": 1e6, "migrations_wakeup": 5e5, "cost_scan": scan_s * 1e9, "tg_updates": 2e6}
    record = {"metrics": [{"value": time}], "wasted_ns": wasted_s * 1e9, "wake": wake}
    p = d / "runs" / variant / "all"
    p.mkdir(parents=True, exist_ok=True)
    (p / f"run-{k}.json").write_text(json.dumps({"variant": variant, "seed": k + 1, "record": record}))


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_time_that_follows_the_idle_cpus_correlates_with_them_and_not_with_the_waits(tmp_path):
    d = tmp_path / "row"
    # Time = 1 s + 0.01 s per idle CPU-s; the waits go the other way, but not in proportion.
    for k, (idle, waits) in enumerate([(10, 30), (20, 10), (40, 20), (80, 5)]):
        write_run(d, "baseline", k, 1 + idle / 100, idle, waits)
    out = run(d)
    assert out.returncode == 0, out.stderr
    row = [line for line in out.stdout.splitlines() if line.startswith("| `row`")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "4"
    assert cells[3] == "10.0–80.0"  # idle CPU-s
    assert cells[4] == "5.0–30.0"  # tg write + read waits + rq lock spin
    assert cells[5] == "+1.00"
    assert float(cells[6]) < -0.5


def test_a_directory_without_runs_is_one_error_line_and_exit_2(tmp_path):
    out = run(tmp_path / "nothing-here")
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert "nothing-here" in out.stderr


def test_by_variant_prints_each_variants_medians(tmp_path):
    d = tmp_path / "row"
    for k, (t, waits, scan) in enumerate([(2.0, 30, 4.0), (3.0, 50, 6.0), (4.0, 100, 8.0)]):  # medians, not means
        write_run(d, "baseline", k, t, 1.0, waits, scan)
        write_run(d, "series", k, t / 2, 1.0, waits / 2, scan / 4)
    out = run("--by-variant", d)
    assert out.returncode == 0, out.stderr
    rows = {c[1]: c for c in ([x.strip() for x in line.strip("|").split("|")] for line in out.stdout.splitlines()
                              if line.startswith("| `row` | baseline |") or line.startswith("| `row` | series |"))}
    # experiment, variant, runs, result, idle, waits, idle scan, wakeups, migrations, tg updates
    assert rows["baseline"][2:7] == ["3", "3", "1.0", "50.0", "6.0"]
    assert rows["series"][2:7] == ["3", "1.5", "1.0", "25.0", "1.5"]
    assert rows["series"][9] == "2.0"


def test_a_run_file_that_is_not_a_record_is_one_error_line_naming_it(tmp_path):
    d = tmp_path / "row"
    for k in range(3):
        write_run(d, "baseline", k, 1.0, 1.0, 1.0)
    (d / "runs" / "baseline" / "all" / "run-0.json").write_text('{"variant": "baseline"}')
    out = run(d)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert "run-0.json" in out.stderr
