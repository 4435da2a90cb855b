"""Push and pull against a Label Studio server's own limits, beside the per-task loop.

    python benchmarks/bench_push_pull.py [--tasks 10000] [--slice 200]
        [--url URL | --database postgresql://USER@HOST:PORT/DB --workers N] [--memory] [--keep DIR]

Without ``--url`` an embedded server is started for the run (SQLite, or ``--database`` /
``--workers`` for PostgreSQL behind gunicorn; the database password from
``$GOLDBOARD_DB_PASSWORD`` / ``$PGPASSWORD``).  With ``--url`` any running server is used;
its admin API token comes from ``$LABEL_STUDIO_API_KEY`` (never the command line).  The
benchmark creates its own projects there (titles start ``bench``) and deletes them at the end.

Measured in one run, same tasks, same server:

* **push**: ``goldboard push`` of TASKS units, blinded into one project per rater (2) --
  against **one bulk import request per project** (``POST /api/projects/<id>/import`` with all
  TASKS tasks, the projects one after the other): the fastest a client can put those tasks in.
  Then the same push again (the idempotent no-op every rerun pays).
* **pull**: ``goldboard pull`` of the 2 x TASKS annotations of a blinded round (validated,
  attributed, ratings.csv written) -- against **the export endpoint** (``GET
  /api/projects/<id>/export?exportType=JSON&download_all_tasks=true``, one project after the other).
* **naive**: one SDK call per task (import; list annotations), measured on ``--slice`` tasks and
  scaled linearly: what a hand-written loop costs.
* ``--memory``: the pull again in a child process, its peak resident memory.

Ratios are goldboard / server limit: 1.00 = as fast as the server can go.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import pandas as pd

from goldboard.annotate import server as srv
from goldboard.annotate.client import Client, connect
from goldboard.annotate.push import push
from goldboard.annotate.simulate import annotation_result
from goldboard.cases.load import load_units
from goldboard.cases.synth import synthesize, write_records
from goldboard.label_configs.xml import task_data, to_label_studio_xml
from goldboard.study import Study
from goldboard.workflows.intake import pull

RATERS = ["onc_a", "onc_b"]
LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]


def make_units(tmp: Path, n_units: int) -> pd.DataFrame:
    cases, outputs = synthesize("mtb", (n_units + 1) // 2, seed=11)  # 2 model outputs per case
    write_records(cases, tmp / "cases.jsonl")
    write_records(outputs, tmp / "outputs.jsonl")
    return load_units(tmp / "cases.jsonl", tmp / "outputs.jsonl", schema="mtb").iloc[:n_units]


def annotations_for(study: Study, units: pd.DataFrame, user_id: int) -> dict[tuple[str, str], list[dict]]:
    """One annotation per task in each rater's project (completed_by = the benchmark's user:
    an external server has no rater accounts, so attribution is by project)."""
    out: dict[tuple[str, str], list[dict]] = {}
    for i, item in enumerate(units["item_id"]):
        for j, r in enumerate(RATERS):
            lab = LABELS[(i + j * (i % 3 == 0)) % 4]
            values = {"safety_label": lab, "missing_info": "stage|ecog_status" if lab == LABELS[3] else ""}
            result = annotation_result(study.schema, values, f"{r} {i}")
            out[(r, str(item))] = [
                {"result": result, "completed_by": user_id, "ground_truth": False, "lead_time": 20.0}
            ]
    return out


def timed(fn, *a, **kw):
    t = time.perf_counter()
    out = fn(*a, **kw)
    return time.perf_counter() - t, out


def pull_child(study_dir: str, url: str) -> None:
    """``--pull-child``: one pull, then print its time and this process's peak RSS (JSON)."""
    st = Study.open(study_dir)
    with connect(st, url=url, token=os.environ["LABEL_STUDIO_API_KEY"]) as client:
        t, res = timed(pull, st, client=client, progress=False, jobs=int(os.environ.get("BENCH_JOBS", "1")))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(json.dumps({"seconds": t, "peak_rss": rss, "annotations": res.summary["valid_annotations"]}))


def push_figures(study, units, client, jobs, n, k, created, lines, record) -> None:
    st = study("push")
    t_push, res = timed(push, st, units=units, client=client, progress=False, jobs=jobs)
    record(st)
    assert all(v == n for v in res.imported.values()), res.imported
    t_repush, res2 = timed(push, Study.open(st.path), units=units, client=client, progress=False, jobs=jobs)
    assert all(v == 0 for v in res2.imported.values()), res2.imported
    xml = to_label_studio_xml(st.schema)
    tasks = [{"data": task_data(row, st.schema)} for row in units.to_dict("records")]
    t_bulk = 0.0
    for r in RATERS:
        pid = client.create_project(f"bench bulk {r}", xml)
        created.append(pid)
        t, made = timed(client.import_tasks, pid, tasks)
        assert made == n, made
        t_bulk += t
    pid = client.create_project("bench naive push", xml)
    created.append(pid)
    t0 = time.perf_counter()
    for t in tasks[:k]:
        client.import_tasks(pid, [t])
    t_naive_push = (time.perf_counter() - t0) * n / k * len(RATERS)
    lines.append(("push", f"{len(RATERS)} x {n} tasks", t_push, t_bulk, "one bulk import/project", t_naive_push))
    lines.append(("push again (no-op)", f"{len(RATERS)} x {n} tasks", t_repush, None, "", None))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--slice", type=int, default=200, help="tasks for the per-task (naive) measurements")
    ap.add_argument("--url", default=None, help="a running Label Studio (admin token in $LABEL_STUDIO_API_KEY)")
    ap.add_argument("--database", default=None, help="embedded server on this PostgreSQL (see server start)")
    ap.add_argument("--workers", type=int, default=None, help="embedded server: gunicorn workers")
    ap.add_argument("--jobs", type=int, default=None, help="projects at once (default: the server's workers)")
    ap.add_argument("--memory", action="store_true", help="peak resident memory of a pull in a child process")
    ap.add_argument("--pull-only", action="store_true", help="skip the push measurements (e.g. a big --memory run)")
    ap.add_argument("--keep", default=None, help="keep the work dir here")
    ap.add_argument("--pull-child", nargs=2, metavar=("STUDY", "URL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.pull_child:
        return pull_child(*args.pull_child)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gb-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    n, k = args.tasks, min(args.slice, args.tasks)
    print(f"work dir {work}; {n} tasks x {len(RATERS)} projects, naive slice {k}", file=sys.stderr)
    units = make_units(work, n)
    created: list[int] = []
    with ExitStack() as stack:
        if args.url:
            token = os.environ.get("LABEL_STUDIO_API_KEY", "")
            if not token:
                sys.exit("--url: put the server's admin API token in $LABEL_STUDIO_API_KEY")
            url, jobs = args.url.rstrip("/"), args.jobs or 1
            where = f"Label Studio at {url}"
        else:
            server = srv.EmbeddedServer(
                work / "server", port=srv.free_port(), database=args.database, workers=args.workers
            )
            t_start, _ = timed(stack.enter_context, server)
            info = srv.server_status(server.data_dir)
            url, token = server.url, server.credentials.admin.token
            jobs = args.jobs or info.workers
            where = f"embedded Label Studio, {info.database}, {info.workers} worker(s)"
            print(f"server started in {t_start:.1f} s: {where}", file=sys.stderr)
        client = stack.enter_context(Client(connect(url=url, token=token).conn))
        me = client.whoami()["id"]
        lines = []

        def study(name: str) -> Study:
            return Study.init(work / name, schema="mtb", raters=RATERS, url=url, name=f"bench {name}")

        def record(st: Study) -> None:
            created.extend(Study.open(st.path).round(1).projects.values())

        try:
            # ---------------- push: goldboard vs one bulk import per project vs per task
            if not args.pull_only:
                push_figures(study, units, client, jobs, n, k, created, lines, record)

            # ---------------- pull: goldboard vs the export endpoint vs per task
            # ---------------- pull: goldboard vs the export endpoint vs per task
            st2 = study("pull")
            t_fill, _ = timed(
                push,
                st2,
                units=units,
                client=client,
                progress=False,
                jobs=jobs,
                annotations=annotations_for(st2, units, me),
            )
            record(st2)
            st2 = Study.open(st2.path)
            t_pull, pr = timed(pull, st2, client=client, progress=False, jobs=jobs)
            n_ann = pr.summary["valid_annotations"]
            assert n_ann == len(RATERS) * n and pr.summary["invalid_annotations"] == 0, pr.summary
            pids = list(st2.round(1).projects.values())
            t_export = 0.0
            for pid in pids:
                t, data = timed(client.export, pid)
                assert len(data) == n
                t_export += t
            del data
            tids = [tid for tid, _ in client.task_data(pids[0])][:k]
            t0 = time.perf_counter()
            got = sum(len(client.sdk.annotations.list(tid)) for tid in tids)
            t_naive_pull = (time.perf_counter() - t0) * n_ann / k
            assert got == k
            lines.append(("pull", f"{n_ann} annotations", t_pull, t_export, "export endpoint/project", t_naive_pull))
            lines.append(("(setup: import tasks with annotations)", f"{n_ann} annotations", t_fill, None, "", None))
            mem = None
            if args.memory:
                env = dict(os.environ, LABEL_STUDIO_API_KEY=token, BENCH_JOBS=str(jobs))
                out = subprocess.run(
                    [sys.executable, __file__, "--pull-child", str(st2.path), url],
                    env=env,
                    capture_output=True,
                    text=True,
                )
                if out.returncode != 0:
                    sys.exit(f"the pull in a child process failed:\n{out.stderr[-2000:]}")
                mem = json.loads(out.stdout.strip().splitlines()[-1])
        finally:
            for pid in created:
                try:
                    client.delete_project(pid)
                except Exception as exc:  # keep going: the figures matter more
                    print(f"could not delete project {pid}: {exc}", file=sys.stderr)

    print(f"\n{where}; {n} tasks per project, jobs={jobs}; naive = one SDK call per task, measured on {k} tasks")
    print(
        f"{'operation':40s} {'size':>22s}  {'goldboard':>9s}  {'server limit':>12s}  {'ratio':>6s}  "
        f"{'naive':>9s}  {'naive/gb':>8s}"
    )
    for name, size, t, limit, limit_name, naive in lines:
        lim = f"{limit:11.1f}s" if limit else " " * 12
        ratio = f"{t / limit:5.2f}x" if limit else " " * 6
        nv = f"{naive:8.1f}s" if naive else " " * 9
        nr = f"{naive / t:7.1f}x" if naive else ""
        print(f"{name:40s} {size:>22s}  {t:8.1f}s  {lim}  {ratio}  {nv}  {nr}")
        if limit_name:
            print(f"{'':40s} {'':>22s}  {'':9s}  ({limit_name})")
    if mem:
        print(
            f"pull in a child process: {mem['annotations']} annotations, {mem['seconds']:.1f} s, "
            f"peak resident memory {mem['peak_rss'] / 2**20:.0f} MiB"
        )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
