"""Peak resident memory of ``goldboard pull`` as the number of annotations grows.

    python benchmarks/bench_pull_memory.py [--annotations 20000 50000 100000 200000]

A blinded round of two rater projects, each exported the way Label Studio 1.23 exports
(tasks with their data -- case and output texts -- and annotations with Label Studio's
bookkeeping fields), served over HTTP by a small local file server, so the pull runs its
real path: the streamed export download, task-by-task reading, attribution, validation,
ratings.csv.  Each size is pulled in a fresh child process; its peak RSS is printed, with
the size of the two exports.  No Label Studio is needed (the server's own memory is not
counted): ``bench_push_pull.py --memory`` measures the same against a live server.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RATERS = ["onc_a", "onc_b"]
LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]


def write_exports(root: Path, n_tasks: int) -> tuple[int, list[str]]:
    """``root/api/projects/<pid>/export`` for the two rater projects (ids 1, 2); returns bytes, items."""
    from goldboard.annotate.simulate import annotation_result
    from goldboard.label_configs.schema import load_schema

    schema = load_schema("mtb")
    total = 0
    items = [f"C{i // 2:06d}::model_{i % 2}" for i in range(n_tasks)]
    for pid, rater in enumerate(RATERS, start=1):
        d = root / "api" / "projects" / str(pid)
        d.mkdir(parents=True)
        with open(d / "export", "w", encoding="utf-8") as fh:
            fh.write("[")
            for i, item in enumerate(items):
                lab = LABELS[(i + pid) % 4]
                values = {"safety_label": lab, "missing_info": "stage|ecog_status" if lab == LABELS[3] else ""}
                task = {
                    "id": pid * 10_000_000 + i,
                    "data": {
                        "item_id": item,
                        "case_id": item.split("::")[0],
                        "output_id": item,
                        "model": item.split("::")[1],
                        "case_text": f"Case {i}: 67-year-old, stage IIIB NSCLC, ECOG 1, PD-L1 60%. " * 8,
                        "output_text": f"Model output {i}: recommend concurrent chemoradiation, then durvalumab. " * 6,
                    },
                    "annotations": [
                        {
                            "id": pid * 10_000_000 + i,
                            "completed_by": 100 + pid,
                            "result": annotation_result(schema, values, f"{rater} rationale {i}"),
                            "was_cancelled": False,
                            "ground_truth": False,
                            "created_at": "2026-11-30T10:00:00.000000Z",
                            "updated_at": "2026-11-30T10:00:00.000000Z",
                            "draft_created_at": None,
                            "lead_time": 20.5,
                            "prediction": {},
                            "result_count": 0,
                            "unique_id": f"u-{pid}-{i}",
                            "import_id": None,
                            "last_action": None,
                            "bulk_created": True,
                            "task": pid * 10_000_000 + i,
                            "project": pid,
                            "updated_by": 100 + pid,
                            "parent_prediction": None,
                            "parent_annotation": None,
                            "last_created_by": None,
                        }
                    ],
                    "drafts": [],
                    "predictions": [],
                    "meta": {},
                    "created_at": "2026-11-30T09:00:00.000000Z",
                    "updated_at": "2026-11-30T10:00:00.000000Z",
                    "inner_id": i + 1,
                    "total_annotations": 1,
                    "cancelled_annotations": 0,
                    "total_predictions": 0,
                    "comment_count": 0,
                    "unresolved_comment_count": 0,
                    "last_comment_updated_at": None,
                    "project": pid,
                    "updated_by": 100 + pid,
                    "file_upload": None,
                    "comment_authors": [],
                }
                fh.write(("," if i else "") + json.dumps(task, ensure_ascii=False))
            fh.write("]")
        total += (d / "export").stat().st_size
    return total, items


def child(study_dir: str, url: str) -> None:
    """Pull the study's round from the file server; print seconds and peak RSS (JSON)."""
    from goldboard.annotate.client import Client, Connection
    from goldboard.study import Study
    from goldboard.workflows.intake import pull

    class Served(Client):  # the project and user calls answered locally; the exports over HTTP
        def project(self, project_id):
            return {"id": project_id, "title": "", "label_config": "", "task_number": None, "description": ""}

        def users(self):
            return [{"id": 100 + i, "email": f"rater{i}@example.org", "username": f"rater{i}"} for i in (1, 2)]

    st = Study.open(study_dir)
    client = Served(Connection(url, "token-not-used", "bench"))
    t = time.perf_counter()
    res = pull(st, client=client, progress=False, jobs=2)
    took = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": took, "peak_rss": rss, "valid": res.summary["valid_annotations"]}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--annotations", type=int, nargs="+", default=[20_000, 50_000, 100_000, 200_000])
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child)
    from goldboard.annotate.server import free_port
    from goldboard.study import Study

    print(f"{'annotations':>12s} {'export size':>12s} {'pull':>8s} {'peak RSS':>10s}")
    for n_ann in args.annotations:
        work = Path(tempfile.mkdtemp(prefix="gb-pullmem-"))
        try:
            size, items = write_exports(work / "www", n_ann // len(RATERS))
            st = Study.init(work / "study", schema="mtb", raters=RATERS, url="http://127.0.0.1")
            rnd = st.get_or_add_round(1, mode="blinded")
            rnd.projects.update({"onc_a": 1, "onc_b": 2})
            st.save()
            port = free_port()
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "http.server",
                    "--bind",
                    "127.0.0.1",
                    str(port),
                    "--directory",
                    str(work / "www"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                time.sleep(1.0)
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(st.path), f"http://127.0.0.1:{port}"],
                    capture_output=True,
                    text=True,
                )
            finally:
                server.terminate()
                server.wait(10)
            if out.returncode != 0:
                sys.exit(f"pull failed:\n{out.stderr[-2000:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            assert r["valid"] == n_ann, r
            print(
                f"{n_ann:12d} {size / 2**20:10.0f}MiB {r['seconds']:7.1f}s {r['peak_rss'] / 2**20:8.0f}MiB", flush=True
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
