"""A Label Studio task with ``data: null`` is no item: ``agree --from-label-studio`` skips it with a
count and a word, never rates its task id as an item beside the others' item ids.

Failed before (checked): the task id (102) became a third item, and agreement counted it.
"""

from __future__ import annotations

import json

from builders import ls_tasks
from conftest import run_cli as run


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
