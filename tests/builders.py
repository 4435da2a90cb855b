"""Study builders shared by the test modules: make a study, write a ratings table or a tool's export,
pull it, fill and import a review sheet, snapshot a study's files, stand in for a Label Studio server.

Imported by name (``from builders import study_files``): conftest.py puts tests/ on ``sys.path``;
the study fixtures made from them (``released``, ``openmtb_pulled``) are in conftest.py.
Each builder is what several test modules wrote for themselves before (issue 31); a test that needs
another shape keeps its own.
"""

from __future__ import annotations

import csv
import importlib
import json
from pathlib import Path

import click
import pandas as pd
from conftest import error_line, invoke_cli, run_cli
from test_adjudication_roundtrip import fill, make_study
from test_flags import I, U

from goldboard.cases.examples import example_path
from goldboard.cli import COMMAND_MODULES
from goldboard.study import Study

# --------------------------------------------------------------------------- a study's files


def study_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its bytes: what "nothing written" compares."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def study_bytes(root: Path) -> dict[str, bytes]:
    """Every file of a study (lock files aside) by its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.suffix != ".lock"
    }


def write_jsonl(path: Path, records: list[dict]) -> Path:
    """``records`` as JSON lines (UTF-8)."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def wide_table(path: Path, ids: list[str], cols: dict[str, list[str]]) -> Path:
    """A wide ratings table: ``case_id`` = ``ids``, one column per entry of ``cols``."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", *cols])
        w.writerows(zip(ids, *cols.values()))
    return path


def write_table(path: Path, rows: list[str]) -> Path:
    """A two-rater wide table ``case_id,a,b`` of ``rows`` (``"C-1,Supported,Unsupported"``)."""
    path.write_text("case_id,a,b\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def plain_ratings(tmp_path: Path) -> Path:
    """A plain long ratings file (item_id, rater, value): raters a and b on 20 items, numeric values."""
    r = tmp_path / "r.csv"
    rows = ["item_id,rater,value"] + [
        f"I{i},{rater},{v}" for i in range(1, 21) for rater, v in (("a", i % 3), ("b", i % 2))
    ]
    r.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return r


# --------------------------------------------------------------------------- errors


def one_error(res) -> str:
    """The one ``Error:`` line of a refused run (exit non-zero, nothing else on stderr)."""
    assert res.exit_code != 0, res.output
    assert len([ln for ln in res.stderr.splitlines() if ln.strip()]) == 1, res.stderr
    assert "Traceback" not in res.output
    return error_line(res)


def error_naming(res, text: str) -> str:
    """The one ``Error:`` line of ``res``, which holds ``text``."""
    errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and text in errors[0], res.output
    return errors[0]


# --------------------------------------------------------------------------- studies


#: the wide-table pull of a two-rater table ``case_id,a,b``
WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label"]


def table_study(tmp_path: Path) -> Path:
    """An empty ``mtb_unsafe`` study of raters onc_a, onc_b (made with ``study init``)."""
    s = tmp_path / "t"
    res = invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    assert res.exit_code == 0, res.output
    return s


def table_of_ids(tmp_path, ids):
    """An empty ``mtb`` study, a table of ``ids`` (onc_a Supported, onc_b Unsupported) and the
    ``pull --from-table`` of it (its result, whatever the exit)."""
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    t = tmp_path / "t.csv"
    t.write_text("case_id,a,b\n" + "".join(f"{i},Supported,Unsupported\n" for i in ids))
    res = invoke_cli(
        "pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b",
        "--field", "safety_label",
    )  # fmt: skip
    return s, t, res


def demo_study(tmp_path):
    """A study with one pulled round (a ratings table, no server)."""
    s = tmp_path / "s"
    assert invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    t = tmp_path / "r.csv"
    t.write_text("case_id,a,b\n" + "".join(f"C{i},Supported,{'Unsafe' if i % 3 else 'Supported'}\n" for i in range(12)))
    res = invoke_cli(
        "pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b",
        "--field", "safety_label",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    return s


#: the worked example's table (OpenMTB: two oncologists' labels and a benchmark label per case)
OPENMTB = example_path("openmtb")
#: its wide-table pull
OPENMTB_WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
OPENMTB_WIDE += ["--field", "safety_label"]


def openmtb_study(tmp_path):
    """A study whose round 1 is the OpenMTB table, pulled (no gold yet): the ``openmtb_pulled``
    fixture (conftest.py)."""
    s = tmp_path / "openmtb"
    run_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run_cli("pull", "--study", s, "--from-table", OPENMTB, *OPENMTB_WIDE)
    return s


def readme_study(tmp_path: Path, gold: bool = True) -> Path:
    """The README walk-through study (openmtb, onc_a/onc_b), gold v1 released; its table is
    ``tmp_path/t.csv``."""
    t = tmp_path / "t.csv"
    invoke_cli("cases", "example", "openmtb", "-o", t, code=0)
    s = tmp_path / "S"
    invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    invoke_cli("pull", "--study", s, "--from-table", t, *OPENMTB_WIDE, code=0)
    if gold:
        invoke_cli("gold", "export", "--study", s, code=0)
    return s


def readme_predictions(tmp_path: Path) -> Path:
    """A model's predictions (model m1) of :func:`readme_study`'s cases: the benchmark labels."""
    p = tmp_path / "pred.jsonl"
    with open(tmp_path / "t.csv", encoding="utf-8") as fh, open(p, "w", encoding="utf-8") as out:
        for r in csv.DictReader(fh):
            label = r["benchmark_label"].replace("Insufficient Info", "Insufficient Information")
            out.write(json.dumps({"case_id": r["case_id"], "model": "m1", "predicted_label": label}) + "\n")
    return p


def judge_labels(tmp_path: Path) -> Path:
    """A judge's labels file (item_id, field, value) of the OpenMTB cases: the benchmark labels."""
    rows = list(csv.DictReader(OPENMTB.open(newline="", encoding="utf-8-sig")))
    p = tmp_path / "bench.csv"
    with open(p, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["item_id", "field", "value"])
        out.writerows([r["case_id"], "safety_label", r["benchmark_label"]] for r in rows)
    return p


def table_pulled(tmp_path) -> Path:
    """An ``mtb`` study whose round 1 was pulled from a 10-item table (onc_a/onc_b differ on C-1)."""
    s = tmp_path / "t"
    assert invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b").exit_code == 0
    t = tmp_path / "wide.csv"
    rows = ["C-1,Supported,Unsupported", "C-2,Supported,Supported", "C-3,Unsupported,Unsupported"]
    rows += [f"C-{n},Supported,Supported" for n in range(4, 11)]
    t.write_text("case_id,a,b\n" + "\n".join(rows) + "\n", encoding="utf-8")
    res = invoke_cli(
        "pull", "--study", s, "--from-table", t, "--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b"
    )
    assert res.exit_code == 0, res.output
    return s


def pulled_table(s: Path, name: str = "ratings.csv") -> pd.DataFrame:
    """Round 1's ``name`` (ratings.csv, invalid.csv) as text, blanks kept."""
    return pd.read_csv(s / "rounds" / "1" / name, dtype=str, keep_default_na=False)


def ratings(s: Path, n: int = 1) -> list[dict]:
    """Round ``n``'s ratings.csv as rows."""
    with open(s / f"rounds/{n}/ratings.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def invalid(s: Path, n: int = 1) -> list[dict]:
    """Round ``n``'s invalid.csv (the held-out rows) as rows."""
    with open(s / f"rounds/{n}/invalid.csv", newline="") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- the review sheet


def sheet_for(study, tmp_path, name="review.xlsx") -> Path:
    """``adjudicate sheet`` of ``study`` (a :class:`Study`) into ``tmp_path/name``."""
    p = tmp_path / name
    res = invoke_cli("adjudicate", "sheet", "--study", study.path, "-o", p)
    assert res.exit_code == 0, res.output
    return p


def import_(study, sheet, *extra, who="dr_lee"):
    """``adjudicate import`` of a filled sheet (adjudicator ``who``)."""
    return invoke_cli("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", who, *extra)


def fill_sheet(path: Path, n: int | None = None) -> int:
    """Type a Decision (rater A's value), Reason and Adjudicator into the first ``n`` rows."""
    from openpyxl import load_workbook

    wb = load_workbook(path)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    dec, rea, adj = head.index("Decision") + 1, head.index("Reason") + 1, head.index("Adjudicator") + 1
    val = head.index("onc_a value") + 1
    last = ws.max_row if n is None else min(ws.max_row, n + 1)
    for r in range(2, last + 1):
        ws.cell(r, dec).value = ws.cell(r, val).value
        ws.cell(r, rea).value = f"reason {r}"
        ws.cell(r, adj).value = "dr_chair"
    wb.save(path)
    return last - 1


def released_study(tmp_path):
    """The hand-counted MTB study with two decisions (D000001, D000002) and gold release v1: the
    ``released`` fixture (conftest.py)."""
    study = make_study(tmp_path)
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    assert import_(study, sheet).exit_code == 0
    res = invoke_cli("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output
    return study


# --------------------------------------------------------------------------- Prodigy files

#: the Prodigy annotators of :func:`task` mapped to the study's raters
RATERS = "p-ana=onc_a,p-ben=onc_b"


def task(item, who="p-ana", value="Supported", at=1767261600, **extra):
    """One Prodigy choice answer on ``item`` by annotator ``who``."""
    rec = {"text": "t", "meta": {"item_id": item}, "options": [{"id": value, "text": value}], "accept": [value]}
    rec.update({"answer": "accept", "_input_hash": 123, "_timestamp": at, "_annotator_id": who}, **extra)
    return rec


def file_pull_refused(s: Path, f: Path, *more) -> str:
    """``pull --from-file prodigy=F`` (annotators :data:`RATERS`) refused: exit 1, nothing written; its output."""
    res = run_cli("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS, *more, code=1)
    assert not (s / "rounds/1/ratings.csv").exists()  # nothing written
    return res.output


def study_and_file(tmp_path: Path, records: list[dict], name: str = "p.jsonl") -> tuple[Path, Path]:
    """An empty ``mtb`` study (onc_a, onc_b) and ``records`` written as a JSON-lines file beside it."""
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / name
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    return s, f


# --------------------------------------------------------------------------- Label Studio exports

#: the pull options of :func:`export_tasks` (users 1 and 2 are onc_a and onc_b)
MAP = ("--item-key", "case_id", "--rater", "1=onc_a,2=onc_b")


def ls_annotation(uid: int, label: str, aid: int, at: str = "2026-01-01T10:00:00Z") -> dict:
    """One Label Studio annotation (id ``aid``) by user ``uid``: ``label`` and a rationale."""
    return {
        "id": aid, "completed_by": uid, "was_cancelled": False, "created_at": at, "updated_at": at, "lead_time": 10.0,
        "result": [
            {"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": [label]}},
            {"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["because"]}},
        ],
    }  # fmt: skip


def ls_tasks(ids=("C-1", "C-2", "C-3")) -> list[dict]:
    """A Label Studio JSON export of three tasks (``case_id`` = ``ids``), each annotated by users 1 and 2."""
    labels = [("Supported", "Supported"), ("Unsupported", "Supported"), ("Unsafe", "Unsafe")]
    return [
        {
            "id": 100 + k,
            "data": {"case_id": c, "case_text": "x", "output_text": "y"},
            "annotations": [ls_annotation(1, a, 1000 + 2 * k), ls_annotation(2, b, 1001 + 2 * k)],
        }
        for k, (c, (a, b)) in enumerate(zip(ids, labels), start=1)
    ]


def _result(value: str) -> list[dict]:
    return [
        {"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": [value]}},
        {"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["x"]}},
    ]


def export_tasks(n: int = 2, first_ann: int = 1002) -> list[dict]:
    """A Label Studio JSON export of ``n`` tasks (case_id C-1 ...), each annotated by users 1 and 2."""
    tasks = []
    for k in range(n):
        anns = [
            {
                "id": first_ann + 2 * k + who - 1,
                "completed_by": who,
                "was_cancelled": False,
                "created_at": "2026-01-01T10:00:00Z",
                "updated_at": "2026-01-01T10:00:00Z",
                "result": _result(value),
            }
            for who, value in ((1, "Supported"), (2, "Unsupported"))
        ]
        tasks.append(
            {"id": 101 + k, "project": 5, "data": {"case_id": f"C-{k + 1}", "output_text": "y"}, "annotations": anns}
        )
    return tasks


def study_with_export(tmp_path: Path, tasks: list[dict], name: str = "export.json") -> tuple[Path, Path]:
    """An ``mtb_unsafe`` study (made once per ``tmp_path``) and ``tasks`` written as an export beside it."""
    s = tmp_path / "s"
    if not s.exists():
        Study.init(s, schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    f = tmp_path / name
    f.write_text(json.dumps(tasks))
    return s, f


#: the raters of :class:`OneProjectServer`'s users (a server pull's ``rater_map``)
ONE_PROJECT_USERS = {"ana@x.org": "onc_a", "ben@x.org": "onc_b"}


def one_project_study(tmp_path: Path) -> Study:
    """An ``mtb_unsafe`` study of onc_a and onc_b whose round 1 is :class:`OneProjectServer`'s
    shared project 5, ready for a server pull (``pull(study, 1, client=..., rater_map=ONE_PROJECT_USERS)``)."""
    s = tmp_path / "s"
    Study.init(s, schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    study = Study.open(s)
    study.get_or_add_round(1, mode="shared").projects = {"*": 5}
    study.save()
    return study


class OneProjectServer:
    """A Label Studio server holding one shared project (5) with :func:`export_tasks`: what a server
    pull reads (its users, the project, the export)."""

    url = "http://127.0.0.1:1"
    conn = type("Conn", (), {"credentials": None, "workers": 1})()

    def users(self):
        return [{"id": 1, "email": "ana@x.org", "username": "ana"}, {"id": 2, "email": "ben@x.org", "username": "ben"}]

    def project(self, pid):
        return {"label_config": "<View/>"}

    def export(self, pid, each=None):
        tasks = export_tasks()
        return [each(t) for t in tasks] if each else tasks


# --------------------------------------------------------------------------- the commands


def leaf_commands() -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command of the CLI that runs (not a group), with its path (``("gold", "export")``)."""
    out = []

    def walk(path: tuple[str, ...], cmd: click.Command) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk((*path, name), sub)
        else:
            out.append((path, cmd))

    for module in COMMAND_MODULES:
        for cmd in importlib.import_module(f"goldboard.cli.{module}").commands:
            walk((cmd.name,), cmd)
    return out
