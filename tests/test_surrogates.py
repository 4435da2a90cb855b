"""Half an emoji (a lone surrogate escape, ``\\ud83d``: a text cut between the two halves of a
character by the program that wrote it) in JSON input: a one-line error naming the file, record and
field (exit 1), or -- a Label Studio round, which must still be pulled -- the text kept whole with
that half written as its escape, and said so.  Never exit 3, never a silent ``?``.

Each test failed on the code before (checked): the Label Studio export file exited 3, the server
export read the half as ``?`` without a word, an options cell of a CSV exited 3, a JSON schema was
loaded, and a JSON array's error named no record or field.
"""

from __future__ import annotations

import io
import json

import pytest
from builders import (
    MAP,
    ONE_PROJECT_USERS,
    OneProjectServer,
    export_tasks,
    ls_tasks,
    one_project_study,
    study_with_export,
)
from conftest import error_line
from conftest import run_cli as run

from goldboard.annotate.client import read_json_array
from goldboard.cases.ratings import read_ratings_csv
from goldboard.study import Study

HALF = "\\ud83d"  # as the JSON text writes it


def _rationale_of(s, item: str, rater: str) -> str:
    got = read_ratings_csv(Study.open(s).ratings_path(1))
    return got[(got["item_id"] == item) & (got["rater"] == rater)]["rationale"].iloc[0]


def test_a_label_studio_export_file_with_half_an_emoji_is_pulled_and_kept_escaped(tmp_path):
    s, f = study_with_export(tmp_path, ls_tasks())
    f.write_text(f.read_text().replace('"because"', f'"because {HALF}"', 1))
    res = run("pull", "--study", s, "--from-export", f, *MAP)
    assert "1 text(s) held half an emoji" in res.stderr and f"{f}:" in res.stderr
    assert "round 1: 6 valid annotations" in res.output
    assert _rationale_of(s, "C-1", "onc_a") == "because \\ud83d"  # the six characters of the escape
    assert _rationale_of(s, "C-1", "onc_b") == "because"


def test_a_server_export_keeps_half_an_emoji_instead_of_a_question_mark():
    raw = b'[{"id": 1, "data": {"t": "a \\ud83d b", "u": "\\ud83d\\ude00"}}]'
    assert read_json_array(io.BytesIO(raw)) == [{"id": 1, "data": {"t": "a \ud83d b", "u": "\U0001f600"}}]


class _HalfEmojiServer(OneProjectServer):
    """The one shared project, its export as Label Studio sends it: one rationale cut in half."""

    def export(self, pid, each=None):
        raw = json.dumps(export_tasks()).replace('"x"', f'"cut {HALF}"', 1).encode()
        return read_json_array(io.BytesIO(raw), each)


def test_a_server_pull_with_half_an_emoji_is_taken_and_said(tmp_path):
    import warnings

    from goldboard.workflows.intake import pull

    study = one_project_study(tmp_path)
    s, users = study.path, ONE_PROJECT_USERS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = pull(study, 1, client=_HalfEmojiServer(), item_key="case_id", rater_map=users, progress=False)
    said = " ".join(result.summary["warnings"])
    assert "project 5 (*): 1 text(s) held half an emoji" in said, said
    assert _rationale_of(s, "C-1", "onc_a") == "cut \\ud83d"


def test_an_options_cell_with_half_an_emoji_is_a_located_error(tmp_path):
    f = tmp_path / "q.csv"
    f.write_text(f'question_id,question,options\nQ1,what?,"{{""A"": ""yes {HALF}"", ""B"": ""no""}}"\n')
    res = run("cases", "validate", f, "--schema", "radsafe", code=1)
    assert f"{f.name}:2: options: invalid JSON: a lone surrogate \\ud83d in 'yes \\ud83d'" in res.output
    assert "internal error" not in res.output


def test_a_json_schema_with_half_an_emoji_is_refused_on_load(tmp_path):
    f = tmp_path / "t.json"
    f.write_text('{"name": "t", "fields": [{"name": "v", "kind": "nominal", "values": ["ok", "bad ' + HALF + '"]}]}')
    line = error_line(run("schema", "show", f, code=1))
    assert f"{f}: invalid JSON: a lone surrogate \\ud83d in 'bad \\ud83d' (field fields[0].values[1])" in line


def test_a_json_array_error_names_the_record_and_field(tmp_path):
    t = tmp_path / "ratings.json"
    rows = [
        {"item_id": "C1", "rater": "onc_a", "field": "safety_label", "value": "Unsafe"},
        {"item_id": "C1", "rater": "onc_b", "field": "safety_label", "value": "Unsafe", "rationale": "x"},
    ]
    t.write_text(json.dumps(rows).replace('"x"', f'"x {HALF}"'))
    line = error_line(run("agree", t, "--schema", "mtb_unsafe", code=1))
    assert f"{t}: invalid JSON: a lone surrogate \\ud83d in 'x \\ud83d' (record 2, field rationale)" in line


def _label_studio_db(path):
    """A Label Studio SQLite file holding the two tables a pull reads (the columns it reads)."""
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("CREATE TABLE task (id INTEGER, data TEXT, project_id INTEGER)")
    con.execute(
        "CREATE TABLE task_completion (id INTEGER, task_id INTEGER, completed_by_id INTEGER, result TEXT, "
        "was_cancelled BOOL, lead_time REAL, created_at TEXT, updated_at TEXT, project_id INTEGER)"
    )
    con.execute("INSERT INTO task VALUES (7, ?, 3)", ('{"item_id": "C-1"}',))
    con.execute("INSERT INTO task VALUES (8, ?, 4)", ('{"item_id": "other project"}',))
    result = '[{"from_name": "rationale", "type": "textarea", "value": {"text": ["cut \\ud83d"]}}]'
    con.execute(
        "INSERT INTO task_completion VALUES (70, 7, 2, ?, 0, 4.5, '2026-01-01 10:00:00.5', '2026-01-01 10:00:01', 3)",
        (result,),
    )
    con.commit()
    con.close()


def test_a_project_label_studio_cannot_export_is_read_from_its_database(tmp_path):
    from goldboard.annotate.client import Client, Connection, ServerError
    from goldboard.fileio import escape_lone_surrogates

    ddir = tmp_path / "lsdata"
    (ddir / "ls").mkdir(parents=True)
    _label_studio_db(ddir / "ls" / "label_studio.sqlite3")
    client = Client(Connection("http://127.0.0.1:1", "t", "test", ddir))
    tasks, db = client.export_from_database(3, each=lambda t: escape_lone_surrogates(t)[0])
    assert db == str(ddir / "ls" / "label_studio.sqlite3")
    assert tasks == [
        {
            "id": 7, "project": 3, "data": {"item_id": "C-1"},
            "annotations": [{
                "id": 70, "completed_by": 2, "was_cancelled": False, "lead_time": 4.5,
                "created_at": "2026-01-01T10:00:00.5Z", "updated_at": "2026-01-01T10:00:01Z",
                "result": [{"from_name": "rationale", "type": "textarea", "value": {"text": ["cut \\ud83d"]}}],
            }],
        }
    ]  # fmt: skip
    remote = Client(Connection("https://ls.example.org", "t", "test"))
    with pytest.raises(ServerError, match="cannot export project 3: a text in it holds half an emoji"):
        remote.export_from_database(3)  # a remote server: no database to read, the way in said
