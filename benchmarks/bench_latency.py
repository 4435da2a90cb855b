"""Benchmark: how long a command takes on a small study, against the leanest script.

Run:  .venv/bin/python benchmarks/bench_latency.py [--runs 9] [--keep DIR]

Builds the 50-item OpenMTB-Audit study in a temporary folder (``goldboard cases example
openmtb``, ``study init S --schema mtb_unsafe --raters onc_a,onc_b``, ``pull --from-table``),
then times five commands as whole processes (interpreter start and imports included), each
paired with the yardstick in turn -- yardstick, command, yardstick, command ... -- and prints,
per command, the median wall time and the median of the per-pair ratios (command / yardstick),
beside the goal of issue 19. The yardstick is the leanest Python script that computes the same
Cohen's kappa and Krippendorff's alpha from the same table: numpy + the ``krippendorff``
package (written next to the study as ``lean.py``).

The commands run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed), as they do for
a user, after one warm-up run each. On a shared machine the absolute times drift; the per-pair
ratio is the figure to quote. Prints; asserts nothing (speed is not a unit test; which modules a
command may load is: ``tests/test_cli_startup.py``).
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

LEAN = """\
import csv, sys
import numpy as np
import krippendorff

rows = list(csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8")))
a = [r["oncologist_a_label"] for r in rows]
b = [r["oncologist_b_label"] for r in rows]
cats = sorted(set(a) | set(b))
code = {c: i for i, c in enumerate(cats)}
x = np.array([[code[v] for v in a], [code[v] for v in b]], dtype=float)
m = np.zeros((len(cats), len(cats)))
for i, j in x.T.astype(int):
    m[i, j] += 1
n = m.sum()
po, pe = np.trace(m) / n, (m.sum(0) * m.sum(1)).sum() / n**2
print("kappa", (po - pe) / (1 - pe))
print("alpha", krippendorff.alpha(reliability_data=x, level_of_measurement="nominal"))
"""

#: (label, arguments after `goldboard`, goal ratio)
COMMANDS = [
    ("agree --study", ["agree", "--study", "S"], 3.0),
    ("flag --study", ["flag", "--study", "S"], 3.0),
    (
        "plan size --alpha-min 0.8 --least-frequent 0.25",
        ["plan", "size", "--alpha-min", "0.8", "--least-frequent", "0.25"],
        3.0,
    ),
    ("adjudicate sheet", ["adjudicate", "sheet", "--study", "S", "-o", "sheet.xlsx"], 5.0),
    ("report --format markdown", ["report", "--study", "S", "--format", "markdown", "-o", "report.md"], 6.0),
]


def goldboard_exe() -> list[str]:
    """The ``goldboard`` console script of this interpreter (what a user runs)."""
    exe = Path(sys.executable).parent / "goldboard"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("goldboard")
    if found:
        return [found]
    raise SystemExit("the goldboard command is not installed next to this Python (make install)")


def timed(cmd: list[str], cwd: Path, env: dict) -> float:
    """Wall seconds of one whole-process run; a failing command stops the benchmark."""
    t = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {res.returncode}): {res.stderr.strip()[-500:]}")
    return wall


def build_study(root: Path, gb: list[str], env: dict) -> None:
    """The OpenMTB-Audit study of issue 19, and the yardstick script."""
    steps = [
        ["cases", "example", "openmtb", "-o", "t.csv"],
        ["study", "init", "S", "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b"],
        ["pull", "--study", "S", "--from-table", "t.csv", "--item-col", "case_id"]
        + ["--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label", "--field", "safety_label"],
    ]
    for step in steps:
        timed(gb + step, root, env)
    (root / "lean.py").write_text(LEAN, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9, help="counted pairs per command (default 9)")
    ap.add_argument("--keep", default=None, help="build the study in this (new) folder and keep it")
    ap.add_argument("--only", default=None, help="comma-separated command labels to time (default: all)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    commands = [c for c in COMMANDS if only is None or c[0] in only]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    gb = goldboard_exe()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gb-latency-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        build_study(root, gb, env)
        lean = [sys.executable, "lean.py", "t.csv"]
        for _, cmd, _ in commands:  # warm-up: bytecode caches, the OS file cache
            timed(gb + cmd, root, env)
        timed(lean, root, env)
        print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {args.runs} interleaved pairs each")
        print(f"{'command':<52} {'median s':>8} {'lean s':>7} {'ratio':>6} {'goal':>5}")
        for label, cmd, goal in commands:
            walls, leans, ratios = [], [], []
            for _ in range(args.runs):
                b = timed(lean, root, env)
                a = timed(gb + cmd, root, env)
                walls.append(a)
                leans.append(b)
                ratios.append(a / b)
            ratio = statistics.median(ratios)
            mark = "ok" if ratio <= goal else "over"
            print(
                f"{label:<52} {statistics.median(walls):8.3f} {statistics.median(leans):7.3f} "
                f"{ratio:5.1f}x {goal:4.0f}x {mark}"
            )
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
