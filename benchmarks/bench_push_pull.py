"""Push 10,000 tasks and pull 20,000 annotations on a live embedded Label Studio,
against the naive way (one SDK call per task) measured in the same run on a slice
and scaled linearly.

    python benchmarks/bench_push_pull.py [--tasks 10000] [--slice 200] [--keep DIR]

* push: ``goldboard.annotate.push.push`` of 10,000 units (shared round: one
  project) -- batched imports of 250 tasks after one listing of existing tasks;
  then a second push of the same units (the idempotent no-op every rerun pays).
  Naive: ``projects.import_tasks(pid, [task])`` once per task.
* pull: ``goldboard.annotate.pull.pull`` of a shared round with 2 annotations on
  each of 10,000 tasks (20,000 annotations; put there by importing tasks with
  their annotations, ``simulate.push_with_ratings``) -- one export request,
  validation, ratings.csv written.  Naive: ``annotations.list(task_id)`` once per task.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from goldboard.annotate import server as srv
from goldboard.annotate.client import connect
from goldboard.annotate.pull import pull
from goldboard.annotate.push import push
from goldboard.annotate.simulate import push_with_ratings
from goldboard.cases.load import load_units
from goldboard.cases.synth import synthesize, write_records
from goldboard.label_configs.xml import task_data, to_label_studio_xml
from goldboard.study import Study

RATERS = ["onc_a", "onc_b"]


def make_units(tmp: Path, n_units: int) -> pd.DataFrame:
    cases, outputs = synthesize("mtb", (n_units + 1) // 2, seed=11)  # 2 model outputs per case
    write_records(cases, tmp / "cases.jsonl")
    write_records(outputs, tmp / "outputs.jsonl")
    return load_units(tmp / "cases.jsonl", tmp / "outputs.jsonl", schema="mtb").iloc[:n_units]


def make_ratings(units: pd.DataFrame) -> pd.DataFrame:
    labels = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
    rows = []
    for i, item in enumerate(units["item_id"]):
        for j, r in enumerate(RATERS):
            lab = labels[(i + j * (i % 3 == 0)) % 4]
            rows.append(
                {
                    "item_id": item,
                    "rater": r,
                    "field": "safety_label",
                    "value": lab,
                    "rationale": f"{r} {i}",
                    "lead_time": 20.0,
                }
            )
            rows.append(
                {
                    "item_id": item,
                    "rater": r,
                    "field": "missing_info",
                    "value": "stage|ecog_status" if lab == "Insufficient Information" else "",
                }
            )
    return pd.DataFrame(rows)


def timed(fn, *a, **kw):
    t = time.perf_counter()
    out = fn(*a, **kw)
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--slice", type=int, default=200, help="tasks for the naive measurements")
    ap.add_argument("--keep", default=None, help="keep the work dir here")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gb-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    n, k = args.tasks, args.slice
    print(f"work dir {work}; {n} tasks, naive slice {k}", file=sys.stderr)
    units = make_units(work, n)
    ratings = make_ratings(units)
    t_setup, _ = timed(srv.prepare_data_dir, work / "server", RATERS)
    print(f"server data dir prepared in {t_setup:.1f} s", file=sys.stderr)
    results = []
    with srv.EmbeddedServer(work / "server", port=srv.free_port(), raters=RATERS) as server:
        # ---------------- push
        st = Study.init(work / "push", schema="mtb", raters=RATERS, data_dir=str(server.data_dir))
        client = connect(st)
        t_push, res = timed(push, st, units=units, shared=True, client=client, progress=False)
        assert res.imported["*"] == n, res.imported
        t_repush, res2 = timed(push, Study.open(st.path), units=units, client=client, progress=False)
        assert res2.imported["*"] == 0 and res2.already["*"] == n
        schema = st.schema
        pid = client.create_project("naive push", to_label_studio_xml(schema))
        tasks = [{"data": task_data(row, schema)} for row in units.iloc[:k].to_dict("records")]
        t0 = time.perf_counter()
        for t in tasks:
            client.sdk.projects.import_tasks(pid, request=[t], request_options={"max_retries": 0})
        t_naive_push = (time.perf_counter() - t0) * n / k
        results.append(("push", n, "tasks", t_push, t_naive_push))
        results.append(("push again (no-op)", n, "tasks", t_repush, None))

        # ---------------- pull
        st2 = Study.init(work / "pull", schema="mtb", raters=RATERS, data_dir=str(server.data_dir))
        t_fill, _ = timed(push_with_ratings, st2, units, ratings, shared=True, client=client, progress=False)
        st2 = Study.open(st2.path)
        t_pull, pr = timed(pull, st2, client=client, progress=False)
        n_ann = pr.summary["valid_annotations"]
        assert n_ann == 2 * n and pr.summary["invalid_annotations"] == 0, pr.summary
        spid = st2.round(1).projects["*"]
        tids = [tid for tid, _ in client.task_data(spid)][:k]
        t0 = time.perf_counter()
        got = 0
        for tid in tids:
            got += len(client.sdk.annotations.list(tid))
        t_naive_pull = (time.perf_counter() - t0) * n / k
        assert got == 2 * k
        results.append(("pull", n_ann, "annotations", t_pull, t_naive_pull))
        results.append(("(setup: import tasks with annotations)", n_ann, "annotations", t_fill, None))

    print(
        f"\nLabel Studio 1.23 embedded (SQLite), {n} tasks; naive = one SDK call per task, measured on "
        f"{k} tasks and scaled x{n / k:g}"
    )
    print(f"{'operation':40s} {'size':>8s}  {'goldboard':>10s}  {'naive':>10s}  {'ratio':>7s}")
    for name, size, _unit, t, naive in results:
        ns = f"{naive:9.1f}s" if naive else "         -"
        ratio = f"{naive / t:6.1f}x" if naive else "      -"
        print(f"{name:40s} {size:8d}  {t:9.1f}s  {ns}  {ratio}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
