"""Benchmark: the study commands on a benchmark-sized table, against the lean pandas way.

Run:  .venv/bin/python benchmarks/bench_scale.py [--items 200000] [--million] [--runs 1] [--keep DIR]

Writes a wide table of ``--items`` items x 2 raters (200,000 x 2 = 400,000 ratings by default;
``--million`` makes it 500,000 x 2 = 1,000,000 ratings) with the OpenMTB-Audit columns and the
``mtb_unsafe`` labels (an alias and a few blank cells included), builds a study from it once
(``study init``, ``pull --from-table``: timed once against the yardstick run after it, goal 5x;
``--only none`` times the pull alone), then times
``agree``, ``flag``, ``gold export`` and ``report --format markdown`` as whole processes,
interpreter start and imports included, each beside the yardstick run in the same loop: the
lean pandas way of reading the same table and writing it long (``read_csv`` + ``melt`` +
``to_csv``, imports included). Peak resident memory is each child's own ``ru_maxrss``
(``os.wait4``). Prints wall seconds, peak GiB and the ratio to the yardstick, then CPU seconds
(user + system, from the same ``wait4``) and their ratio -- the steadier figure when other work
shares the cores (on this 2-core machine a process's wall time beyond its CPU time is time spent
waiting for a core: /proc/PID/schedstat accounts for all of it); asserts nothing.  The load average
is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_latency import goldboard_exe  # the console script a user runs (this folder is on sys.path)

LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information", "Unsafe"]

LEAN = """\
import sys
import pandas as pd

df = pd.read_csv(sys.argv[1])
long = df.melt(id_vars=["case_id"], value_vars=["oncologist_a_label", "oncologist_b_label"],
               var_name="rater", value_name="safety_label")
long.to_csv(sys.argv[2], index=False)
"""

#: (label, arguments after `goldboard`, goal ratio)
COMMANDS = [
    ("agree", ["agree", "--study", "S", "--format", "json"], 5.0),
    ("flag", ["flag", "--study", "S", "--format", "csv", "-o", "flags.csv"], 5.0),
    ("gold export", ["gold", "export", "--study", "S", "--force"], 5.0),
    ("report --format markdown", ["report", "--study", "S", "--format", "markdown", "-o", "report.md"], 10.0),
]


def label_of(i: int, salt: int) -> str:
    """A deterministic label: rater b agrees with rater a on about 80% of items."""
    return LABELS[((i * 2654435761 + salt) >> 7) % len(LABELS)]


def write_table(path: Path, n: int) -> None:
    """The wide table: case_id, benchmark_label, oncologist_a_label, oncologist_b_label."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("case_number,case_id,benchmark_label,oncologist_a_label,oncologist_b_label\n")
        for i in range(n):
            a = label_of(i, 0)
            b = a if (i * 7919) % 10 < 8 else label_of(i, 12345)
            if i % 997 == 5:
                b = ""  # a blank cell: not rated
            if a == "Insufficient Information" and i % 13 == 0:
                a = "Insufficient Info"  # the schema's alias
            fh.write(f"{i + 1},C{i:07d},{label_of(i, 777)},{a},{b}\n")


def run(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one whole-process run; a
    failure stops the benchmark.  On a shared machine the CPU seconds are the steadier measure: the
    wall time of each process grows with the load the other users put on the cores."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode}): {err.strip()[-800:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def build_study(root: Path, gb: list[str], env: dict, n: int) -> tuple[float, float, float]:
    """The table, the study and its pull; returns the pull's wall seconds, peak MiB and CPU seconds."""
    write_table(root / "t.csv", n)
    (root / "lean.py").write_text(LEAN, encoding="utf-8")
    run(gb + ["study", "init", "S", "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b"], root, env)
    pull = ["pull", "--study", "S", "--from-table", "t.csv", "--item-col", "case_id"]
    pull += ["--raters", "onc_a=oncologist_a_label,onc_b=oncologist_b_label", "--field", "safety_label"]
    return run(gb + pull, root, env)


def line(
    label: str, walls: list[float], peaks: list[float], ratios: list[float], goal: float | None, cpu: tuple
) -> str:
    """One row: median wall s, max peak GiB, median wall ratio, median CPU s and CPU ratio, goal."""
    ratio = statistics.median(ratios)
    verdict = "" if goal is None else f"{goal:5.0f}x {'ok' if ratio <= goal else 'over'}"
    cpus, cpu_ratios = cpu
    return (
        f"{label:<26} {statistics.median(walls):8.2f} {max(peaks) / 1024:7.2f} {ratio:6.1f}x "
        f"{statistics.median(cpus):7.2f} {statistics.median(cpu_ratios):6.1f}x {verdict}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=200_000, help="items in the wide table (default 200000)")
    ap.add_argument("--million", action="store_true", help="500,000 items x 2 raters = 1,000,000 ratings")
    ap.add_argument("--runs", type=int, default=1, help="interleaved pairs per command (default 1)")
    ap.add_argument("--keep", default=None, help="build the study in this (new) folder and keep it")
    ap.add_argument("--reuse", action="store_true", help="with --keep DIR: time the study already in DIR")
    ap.add_argument("--only", default=None, help="comma-separated command labels to time (default: all)")
    args = ap.parse_args()
    n = 500_000 if args.million else args.items
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    gb = goldboard_exe()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gb-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    lean = [sys.executable, "lean.py", "t.csv", "long.csv"]
    try:
        reuse = args.reuse and (root / "S" / "rounds").is_dir()
        nan = float("nan")
        pull_wall, pull_peak, pull_cpu = (nan, nan, nan) if reuse else build_study(root, gb, env, n)
        lw, lp, lc = run(lean, root, env)
        print(f"{n:,} items x 2 raters = {2 * n:,} ratings; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
        head = f"{'command':<26} {'wall s':>8} {'peak GiB':>7} {'ratio':>7} {'cpu s':>7} {'ratio':>7} {'goal':>6}"
        print(head)
        if not reuse:
            print(
                line(
                    "pull --from-table", [pull_wall], [pull_peak], [pull_wall / lw], 5.0, ([pull_cpu], [pull_cpu / lc])
                )
            )
        only = set(args.only.split(",")) if args.only else None
        lean_walls, lean_peaks, lean_cpus = [lw], [lp], [lc]
        for label, cmd, goal in COMMANDS:
            if only and label not in only:
                continue
            walls, peaks, ratios, cpus, cpu_ratios = [], [], [], [], []
            for _ in range(args.runs):
                b, bp, bc = run(lean, root, env)
                a, ap_, ac = run(gb + cmd, root, env)
                walls.append(a)
                peaks.append(ap_)
                ratios.append(a / b)
                cpus.append(ac)
                cpu_ratios.append(ac / bc)
                lean_walls.append(b)
                lean_peaks.append(bp)
                lean_cpus.append(bc)
            print(line(label, walls, peaks, ratios, goal, (cpus, cpu_ratios)))
        print(
            f"{'yardstick (pandas)':<26} {statistics.median(lean_walls):8.2f} {max(lean_peaks) / 1024:7.2f} "
            f"{'':7} {statistics.median(lean_cpus):7.2f}"
        )
        print(f"load {os.getloadavg()[0]:.2f} at the end (wall = CPU + time waiting for a core: compare CPU seconds)")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
