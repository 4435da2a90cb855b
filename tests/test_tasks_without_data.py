"""A Label Studio task with ``data: null`` is no item: ``agree --from-label-studio`` skips it with a
count and a word, never rates its task id as an item beside the others' item ids; a pull holds its
annotations out in invalid.csv saying why.

Failed before (checked): the task id (102) became a third item, and agreement counted it; the pull's
reason said the task had no case_id in its data.
"""

from __future__ import annotations

import csv
import json

from builders import ONE_PROJECT_USERS, OneProjectServer, export_tasks, ls_tasks, one_project_study
from conftest import run_cli as run

from goldboard.cases.ratings import read_ratings_csv


def test_a_task_whose_data_is_null_is_skipped_and_counted(tmp_path):
    tasks = ls_tasks()
    for t in tasks:
        t["data"]["item_id"] = t["data"]["case_id"]
    tasks[1]["data"] = None
    f = tmp_path / "export.json"
    f.write_text(json.dumps(tasks))
    res = run("agree", "--from-label-studio", f, "--field", "safety_label")
    assert f"{f}: 1 task(s) with no data (data: null: task 102) skipped, their 2 annotation(s) not read" in res.stderr
    assert "2 items, 2 raters" in res.stdout and "102" not in res.stdout


class _NullDataServer(OneProjectServer):
    def export(self, pid, each=None):
        tasks = export_tasks(3)
        tasks[2]["data"] = None
        return [each(t) for t in tasks] if each else tasks


def test_a_server_task_whose_data_is_null_is_held_out_saying_so(tmp_path):
    from goldboard.workflows.intake import pull

    study = one_project_study(tmp_path)
    users = ONE_PROJECT_USERS
    pull(study, 1, client=_NullDataServer(), item_key="case_id", rater_map=users, progress=False)
    assert sorted(set(read_ratings_csv(study.ratings_path(1))["item_id"])) == ["C-1", "C-2"]
    with open(study.invalid_path(1), newline="") as fh:
        held = [(r["task_id"], r["reason"]) for r in csv.DictReader(fh)]
    assert held == [("103", "task has no data (data: null): no item to attribute its annotations to")] * 2
