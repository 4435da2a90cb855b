"""Property-style fuzz test of every command that reads a file.

For each input a command is given, exactly one of these must happen:

- **clean error**: non-zero exit, no exception escaping click, and exactly one line on
  stderr, starting ``Error:`` (commands that list every problem of a file, such as
  ``cases validate`` and ``adjudicate import``, print the problems first -- each naming
  its file and line/cell -- and then that one ``Error:`` line);
- **correct result**: exit 0 and an oracle computed independently from the input
  agrees with what the command wrote (every rationale, reason, item id and model name
  read back exactly; the flagged items, agreement counts and accuracies as computed by
  hand).

Never a traceback; never exit 0 on an input that cannot be right (a "silent
acceptance").  The inputs are damaged files (binary junk, non-UTF-8, empty, deep JSON,
an .xlsx with malformed XML, an .ods, a folder, a missing file, wrong JSON shapes,
ragged and unclosed CSV), each fed to every file-reading command and planted as each
of the study's own files, plus well-formed files carrying the hostile-string corpus
(``tests/hostile.py``) in every text cell, generated from fixed seeds: the run is
deterministic and bounded (about 1,500 command runs, well under a minute).

``test_zz_figures`` prints the totals (inputs tried, clean errors, correct results,
tracebacks, silent acceptances).
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import shutil
import unicodedata
from collections import Counter
from pathlib import Path

import hostile
import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner

from goldboard.adjudicate.decisions import read_decisions
from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
from goldboard.cli import main
from goldboard.fileio import csv_text, read_csv_frame
from goldboard.study import Study

pytestmark = pytest.mark.slow  # ~150 s: thousands of hostile inputs through every command

S, P, U, I = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"
LABELS = [S, P, U, I]
RATERS = ["onc_a", "onc_b"]
UIDS = {"onc_a": 2, "onc_b": 3}
PROJECTS = {"onc_a": 11, "onc_b": 12}

#: characters a terminal must never receive from data (escape sequences, bell, NUL, CR, bidi controls)
TERMINAL_UNSAFE = set("\x1b\x07\x00\r\x9b\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
TALLY: Counter = Counter()
#: inputs and outcomes per test (the per-campaign figures printed by test_zz_figures)
BY_TEST: dict[str, Counter] = {}
FAILURES: list[str] = []


# --------------------------------------------------------------------------- running and judging


def invoke(args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def _stderr_lines(res) -> list[str]:
    return [ln for ln in res.stderr.splitlines() if ln.strip()]


def judge(name: str, res, *, must_fail: bool, oracle=None, listing: bool = False, must_pass: bool = False) -> str:
    """Classify one run, record it in the tally and (if wrong) in FAILURES."""
    TALLY["inputs"] += 1
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[-1].split(" ")[0]
    outcome = _judge(name, res, must_fail=must_fail, oracle=oracle, listing=listing)
    if must_pass and outcome == "error":  # a valid input refused is as wrong as a bad one accepted
        TALLY["clean errors"] -= 1
        TALLY["valid inputs refused"] += 1
        FAILURES.append(f"{name}: a valid input was refused: {res.stderr.strip()[:300]}")
        outcome = "refused"
    BY_TEST.setdefault(test, Counter())[outcome] += 1
    return outcome


def _judge(name: str, res, *, must_fail: bool, oracle, listing: bool) -> str:
    exc = res.exception
    if exc is not None and not isinstance(exc, SystemExit):
        TALLY["tracebacks"] += 1
        FAILURES.append(f"{name}: traceback {type(exc).__name__}: {str(exc)[:200]}")
        return "traceback"
    if "Error: internal error" in res.stderr:  # the CLI's safety net caught a bug: as bad as a traceback
        TALLY["tracebacks"] += 1
        FAILURES.append(f"{name}: {res.stderr.strip()[:300]}")
        return "traceback"
    if res.exit_code != 0:
        lines = _stderr_lines(res)
        errors = [ln for ln in lines if ln.startswith("Error:")]
        others = [ln for ln in lines if not ln.startswith("Error:")]
        ok = len(errors) == 1 and "Traceback" not in res.output
        if not listing:
            ok = ok and len(lines) == 1
        if ok:
            TALLY["clean errors"] += 1
            return "error"
        TALLY["not one line"] += 1
        FAILURES.append(f"{name}: exit {res.exit_code} but stderr is not one Error line: {errors[:2]} + {others[:3]}")
        return "bad error"
    if must_fail:
        TALLY["silent acceptances"] += 1
        FAILURES.append(f"{name}: exit 0 on an input that must be refused; stdout: {res.stdout[:200]!r}")
        return "silent"
    if oracle is not None:
        problem = oracle(res)
        if problem:
            TALLY["wrong results"] += 1
            FAILURES.append(f"{name}: exit 0 but {problem}")
            return "wrong"
    TALLY["correct results"] += 1
    return "ok"


@pytest.fixture()
def failures():
    start = len(FAILURES)
    yield
    new = FAILURES[start:]
    per_command: dict[str, list[str]] = {}
    for f in new:
        per_command.setdefault(f.split(" <- ")[0].split(" seed ")[0], []).append(f)
    shown = [f for fs in per_command.values() for f in fs[:3]]
    assert not new, f"{len(new)} failures (at most 3 per command shown):\n" + "\n".join(shown)


# --------------------------------------------------------------------------- a study without a server


def ch(name, *values):
    return {"from_name": name, "to_name": "output", "type": "choices", "value": {"choices": list(values)}}


def tx(name, text):
    return {"from_name": name, "to_name": "output", "type": "textarea", "value": {"text": [text]}}


def export(rater: str, rows: list[tuple[str, str, str]]) -> list[dict]:
    """A Label Studio JSON export of ``rater``'s project: (item id, label, rationale) per task."""
    uid, pid = UIDS[rater], PROJECTS[rater]
    tasks = []
    for n, (item, label, rationale) in enumerate(rows, start=1):
        result = [ch("safety_label", label)]
        if label in (I, P):
            result.append(ch("missing_info", "stage"))
        result.append(tx("rationale", rationale))
        tasks.append(
            {
                "id": pid * 100 + n,
                "project": pid,
                "data": {
                    "item_id": item,
                    "case_id": item.split("::")[0],
                    "output_id": item,
                    "model": "m",
                    "case_text": "case",
                    "output_text": "output",
                },
                "annotations": [
                    {
                        "id": pid * 1000 + n,
                        "completed_by": uid,
                        "result": result,
                        "was_cancelled": False,
                        "created_at": "2026-01-01T10:00:00Z",
                        "updated_at": "2026-01-01T10:00:00Z",
                        "lead_time": 12.5,
                    }
                ],
            }
        )
    return tasks


BASE_A = [S, S, U, I, P, S, U, I]
BASE_B = [S, U, U, S, P, I, U, P]


def new_study(path: Path) -> Study:
    st = Study.init(path, schema="mtb", raters=RATERS, url="http://127.0.0.1:9")
    rnd = st.get_or_add_round(1)
    rnd.projects = dict(PROJECTS)
    st.save()
    return st


def pull_args(st: Path, files: dict[str, Path]) -> list:
    args = ["pull", "--study", st, "--quiet"]
    for rater, f in files.items():
        args += ["--from-export", f"{rater}={f}"]
    return args


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A pulled study (8 items, hostile rationales), its review sheet filled in, a gold
    release, plus good input files of every kind the commands read."""
    root = tmp_path_factory.mktemp("fuzz")
    rng = random.Random(11)
    items = [f"C{n}::m" for n in range(1, 9)]
    st = new_study(root / "study")
    files = {}
    for rater, labels in (("onc_a", BASE_A), ("onc_b", BASE_B)):
        f = root / f"{rater}.json"
        f.write_text(json.dumps(export(rater, [(i, lab, hostile.mixed(rng)) for i, lab in zip(items, labels)])))
        files[rater] = f
    skeleton = root / "skeleton"
    shutil.copytree(st.path, skeleton)
    res = invoke(pull_args(st.path, files))
    assert res.exit_code == 0, res.output
    sheet = root / "review.xlsx"
    res = invoke(["adjudicate", "sheet", "--study", st.path, "-o", sheet])
    assert res.exit_code == 0, res.output
    good = {
        "cases": root / "cases.jsonl",
        "outputs": root / "outputs.jsonl",
        "ratings": st.ratings_path(1),
        "reference": root / "reference.jsonl",
        "predictions": root / "predictions.jsonl",
        "schema": root / "schema.toml",
        "sheet": sheet,
        "export_a": files["onc_a"],
    }
    good["cases"].write_text(
        "".join(json.dumps({"case_id": f"C{n}", "case_text": f"case {n}"}) + "\n" for n in range(1, 9))
    )
    good["outputs"].write_text(
        "".join(json.dumps({"case_id": f"C{n}", "model": "m", "output": f"therapy {n}"}) + "\n" for n in range(1, 9))
    )
    good["reference"].write_text(
        "".join(json.dumps({"case_id": f"C{n}", "support_label": BASE_A[n - 1]}) + "\n" for n in range(1, 9))
    )
    good["predictions"].write_text(
        "".join(json.dumps({"case_id": f"C{n}", "predicted_label": BASE_B[n - 1]}) + "\n" for n in range(1, 9))
    )
    good["schema"].write_text((Path(__file__).resolve().parents[1] / "docs/examples/custom_schema.toml").read_text())
    released = root / "released"
    shutil.copytree(st.path, released)
    res = invoke(["gold", "export", "--study", released])
    assert res.exit_code == 0, res.output
    return {"root": root, "study": st.path, "skeleton": skeleton, "released": released, "good": good, "items": items}


def fresh_copy(world, name: str, what: str = "study") -> Path:
    """A private copy of the pulled study (or of the unpulled skeleton) for a command that writes."""
    dst = world["root"] / "runs" / name
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(world[what], dst)
    return dst


# --------------------------------------------------------------------------- damaged files


def damaged_inputs() -> list[tuple[str, str, bytes | None]]:
    """(name, suffix, content) of files no command can take; ``None`` content: a folder."""
    out: list[tuple[str, str, bytes | None]] = []
    for suffix in (".csv", ".tsv", ".jsonl", ".json", ".xlsx"):
        for k, blob in enumerate(hostile.BINARY):
            out.append((f"binary{k}{suffix}", suffix, blob))
    deep = hostile.deep_json().encode()
    out += [
        ("deep.json", ".json", deep),
        ("deep.jsonl", ".jsonl", deep + b"\n"),
        ("deep_in_record.jsonl", ".jsonl", b'{"case_id": "C1", "x": ' + deep + b"}\n"),
        ("deep_in_array.json", ".json", b'[{"case_id": "C1", "x": ' + deep + b"}]"),
    ]
    ok_xlsx = hostile.xlsx_bytes([["item_id", "rater", "value"], ["a", "onc_a", S], ["a", "onc_b", U]])
    for member in ("xl/worksheets/sheet1.xml", "xl/workbook.xml", "[Content_Types].xml", "xl/styles.xml"):
        for how in ("truncate", "junk"):
            out.append(
                (f"badxml_{member.split('/')[-1]}_{how}.xlsx", ".xlsx", hostile.damage_xlsx(ok_xlsx, member, how))
            )
    out += [
        ("libreoffice.ods", ".ods", hostile.ods_bytes()),
        ("xlsx_named.ods", ".ods", ok_xlsx),
        ("legacy.xls", ".xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100),
        ("notes.txt", ".txt", b"item_id,rater,value\n"),
        ("noext", "", b'{"case_id": "C1"}\n'),
        ("folder.csv", ".csv", None),
    ]
    shapes = [b"42", b'"text"', b"[1, 2]", b"null", b"[]", b"{}", b"[[]]", b'{"a": 1, "a": [1]}', b"[{}]"]
    out += [(f"shape{k}.json", ".json", s) for k, s in enumerate(shapes)]
    out += [
        ("jsonl_array.jsonl", ".jsonl", b"[1]\n"),
        ("jsonl_two_on_a_line.jsonl", ".jsonl", b'{"a":1}{"b":2}\n'),
        ("jsonl_string.jsonl", ".jsonl", b'"x"\n'),
        ("jsonl_blank.jsonl", ".jsonl", b"\n\n  \n"),
        ("csv_header_only.csv", ".csv", b"item_id,rater,value\r\n"),
        ("csv_unclosed_quote.csv", ".csv", b'item_id,rater,value\na,onc_a,"Supported\nb,onc_b,x\n'),
        ("csv_ragged.csv", ".csv", b"item_id,rater,value\na,onc_a,Supported,extra,cells\n"),
        ("csv_nul.csv", ".csv", b"item_id,rater,value\x00\na\x00,onc_a,Supported\n"),
        ("csv_huge_garbage.csv", ".csv", b"x" * 300_000),
    ]
    return out


def materialise(dirpath: Path, name: str, content: bytes | None) -> Path:
    p = dirpath / name
    if content is None:
        p.mkdir(parents=True, exist_ok=True)
    else:
        p.write_bytes(content)
    return p


def file_commands(world) -> list[tuple[str, callable, bool]]:
    """(name, argv builder taking the input path, writes-to-study) of every command reading a user file."""
    g = world["good"]
    st = world["study"]
    return [
        ("cases validate", lambda f: ["cases", "validate", f, "--schema", "mtb"], False),
        (
            "cases validate --outputs",
            lambda f: ["cases", "validate", g["cases"], "--outputs", f, "--schema", "mtb"],
            False,
        ),
        ("push", lambda f, s=None: ["push", "--study", s or st, f, "--quiet"], True),
        ("agree TABLE", lambda f: ["agree", f, "--format", "json"], False),
        ("agree TABLE --raters", lambda f: ["agree", f, "--raters", "onc_a,onc_b", "--format", "json"], False),
        (
            "agree --from-label-studio",
            lambda f: ["agree", "--from-label-studio", f, "--field", "safety_label", "--format", "json"],
            False,
        ),
        ("agree --schema FILE", lambda f: ["agree", g["ratings"], "--schema", f, "--format", "json"], False),
        ("flag RATINGS", lambda f: ["flag", f, "--schema", "mtb", "--format", "csv"], False),
        ("flag --schema FILE", lambda f: ["flag", g["ratings"], "--schema", f], False),
        (
            "adjudicate import",
            lambda f, s=None: ["adjudicate", "import", "--study", s or st, f, "--adjudicator", "dr"],
            True,
        ),
        (
            "pull --from-export",
            lambda f, s=None: ["pull", "--study", s or st, "--quiet", "--from-export", f"onc_a={f}"],
            True,
        ),
        (
            "score --predictions",
            lambda f: ["score", "--gold", g["reference"], "--schema", "mtb", "--predictions", f],
            False,
        ),
        ("score --gold", lambda f: ["score", "--gold", f, "--schema", "mtb", "--predictions", g["predictions"]], False),
        (
            "report --predictions",
            lambda f: [
                "report",
                "--study",
                world["released"],
                "--predictions",
                f,
                "--format",
                "markdown",
                "-o",
                world["root"] / "r.md",
            ],
            False,
        ),
        ("schema show", lambda f: ["schema", "show", f], False),
        ("schema config", lambda f: ["schema", "config", f], False),
        ("study init --schema FILE", lambda f, s=None: ["study", "init", s, "--schema", f, "--raters", "a,b"], True),
    ]


#: (command, input) that are legitimate: Label Studio exports a project nobody annotated as []
MAY_PASS = {("pull --from-export", "shape4.json")}
#: slow commands (the report computes everything before reading --predictions): every n-th input only
SAMPLED = {"report --predictions": 7}
#: commands that list every problem of a case file (each on its own line) before the one Error line
LISTING = ("cases validate", "push")
ENV = {"LABEL_STUDIO_API_KEY": "fuzz-token-not-a-secret"}  # push then fails at connect, never at the file


def test_damaged_files_are_one_line_errors_for_every_command(world, failures):
    d = world["root"] / "damaged"
    d.mkdir(exist_ok=True)
    inputs = damaged_inputs()
    for cname, build, writes in file_commands(world):
        for k, (name, _suffix, content) in enumerate(inputs):
            if cname in SAMPLED and k % SAMPLED[cname]:
                continue
            f = materialise(d, name, content)
            if writes:
                target = fresh_copy(world, "w", "study") if cname != "study init --schema FILE" else None
                if target is None:
                    target = world["root"] / "runs" / "new_study"
                    shutil.rmtree(target, ignore_errors=True)
                res = invoke(build(f, target), env=ENV)
            else:
                res = invoke(build(f), env=ENV)
            must_fail = (cname, name) not in MAY_PASS
            judge(f"{cname} <- {name}", res, must_fail=must_fail, listing=cname.startswith(LISTING))
    missing = d / "does_not_exist.jsonl"
    for cname, build, writes in file_commands(world):
        res = invoke(build(missing, fresh_copy(world, "w")) if writes else build(missing), env=ENV)
        judge(f"{cname} <- missing file", res, must_fail=True, listing=cname.startswith(LISTING))


# --------------------------------------------------------------------------- the study's own files damaged

STUDY_FILES = {
    "study.toml": ["study", "show", "{st}"],
    "rounds/1/ratings.csv": ["agree", "--study", "{st}", "--format", "json"],
    "decisions.jsonl": ["gold", "export", "--study", "{st}"],
    "units.jsonl": ["pull", "--study", "{st}", "--quiet", "--from-export", "onc_a={export_a}"],
    "gold/v1/manifest.json": ["gold", "list", "--study", "{st}"],
    "gold/v1/gold.csv": ["score", "--study", "{st}", "--predictions", "{predictions}"],
}
STUDY_FILE_READERS = {
    "rounds/1/ratings.csv": [
        ["flag", "--study", "{st}"],
        ["adjudicate", "sheet", "--study", "{st}", "-o", "{tmp}/s.xlsx"],
        ["gold", "export", "--study", "{st}"],
        ["report", "--study", "{st}", "--format", "markdown", "-o", "{tmp}/r.md"],
    ],
    "decisions.jsonl": [["adjudicate", "sheet", "--study", "{st}", "-o", "{tmp}/s.xlsx"]],
    "gold/v1/gold.csv": [["gold", "diff", "--study", "{st}", "v1", "v2"]],
}


def test_damaged_study_files_are_one_line_errors(world, failures):
    text_junk = [
        ("binary", hostile.BINARY[2]),
        ("latin1", hostile.BINARY[6]),
        ("empty", b""),
        ("deep", hostile.deep_json(50_000).encode()),
        ("half_line", b'{"item_id": "C1::m", "field": "safety_la'),
        ("array", b"[1, 2, 3]\n"),
        # the same junk as complete lines (a decisions log ignores a torn last line, with a warning)
        ("binary_line", hostile.BINARY[2] + b"\n"),
        ("deep_line", hostile.deep_json(50_000).encode() + b"\n"),
        ("half_line_nl", b'{"item_id": "C1::m", "field": "safety_la\n'),
    ]
    for rel, first in STUDY_FILES.items():
        for cmd in [first] + STUDY_FILE_READERS.get(rel, []):
            for jname, blob in text_junk:
                st = fresh_copy(world, "broken", "released")
                (st / rel).parent.mkdir(parents=True, exist_ok=True)
                (st / rel).write_bytes(blob)
                if rel == "gold/v1/gold.csv" and cmd[1] == "diff":
                    shutil.copytree(st / "gold" / "v1", st / "gold" / "v2")
                args = [
                    a.format(
                        st=st,
                        tmp=world["root"],
                        export_a=world["good"]["export_a"],
                        predictions=world["good"]["predictions"],
                    )
                    for a in cmd
                ]
                res = invoke(args)
                # an empty decisions log or units file is a valid one (nothing decided / pushed yet)
                must_fail = not (rel in ("decisions.jsonl", "units.jsonl") and jname == "empty")
                oracle = None
                if rel == "decisions.jsonl" and not blob.endswith(b"\n") and blob:
                    # a last line without its newline is an interrupted write of an older goldboard:
                    # ignored, but never silently (see adjudicate.decisions.read_decisions)
                    must_fail = False

                    def oracle(res):
                        warned = "Warning:" in res.stderr and "incomplete" in res.stderr
                        return None if warned else "an unreadable last log line was ignored without a warning"

                judge(f"{' '.join(cmd[:2])} with {rel} <- {jname}", res, must_fail=must_fail, oracle=oracle)


#: hand edits of a study's own files (issue 23, campaign 5 H group): (name, edit, must_fail, what stderr says)
def _hand_edits() -> list[tuple[str, callable, bool, str]]:
    def toml(st, old, new):
        f = st / "study.toml"
        f.write_text(f.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")

    def bom(st):
        f = st / "study.toml"
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())

    def pull_json(st, blob):
        f = st / "rounds" / "1" / "pull.json"
        f.unlink() if blob is None else f.write_bytes(blob)

    return [
        ("rater twice", lambda st: toml(st, '"onc_b",', '"onc_b",\n    "onc_b",'), True, ""),
        ("one rater", lambda st: toml(st, '"onc_b",', ""), True, ""),
        ("schema renamed", lambda st: toml(st, 'schema = "mtb"', 'schema = "radsafe"'), True, ""),
        ("study.toml BOM", bom, False, ""),
        ("pull.json deleted", lambda st: pull_json(st, None), False, "pull.json: missing, so"),
        ("pull.json junk", lambda st: pull_json(st, hostile.BINARY[2]), False, "pull.json: cannot be read"),
        ("pull.json half", lambda st: pull_json(st, b'{"ratings_sha256": "ab'), False, "pull.json: not valid JSON"),
        # campaign 6 H16: a round folder renamed to a name that reads as its number is refused by every reader
        ("rounds/1 -> 01", lambda st: (st / "rounds" / "1").rename(st / "rounds" / "01"), True, ""),
        ("rounds/1 -> 1+ZWSP", lambda st: (st / "rounds" / "1").rename(st / "rounds" / "1\u200b"), True, ""),
        ("rounds/1 copied to 01", lambda st: shutil.copytree(st / "rounds" / "1", st / "rounds" / "01"), True, ""),
    ]


HAND_EDIT_READERS = [
    ["agree", "--study", "{st}", "--format", "json"],
    ["flag", "--study", "{st}", "--format", "csv", "-o", "{tmp}/f.csv"],
    ["report", "--study", "{st}", "--format", "markdown", "-o", "{tmp}/r.md", "--no-supplement"],
    ["gold", "export", "--study", "{st}", "--force"],
]


def test_hand_edited_study_files_are_named_by_every_reader(world, failures):
    """A study file edited by hand is refused in one line (what ``study init`` would refuse, a
    schema other than the ratings were pulled with), read as meant (a BOM: the oracle is the
    unedited study's agreement), or read with a warning naming the file that makes the ratings
    unverifiable (a missing or damaged pull.json; ``gold export`` refuses it)."""
    clean = invoke(["agree", "--study", world["released"], "--format", "json"])
    assert clean.exit_code == 0, clean.output
    for name, edit, refused, says in _hand_edits():
        for cmd in HAND_EDIT_READERS:
            st = fresh_copy(world, "hand", "released")
            edit(st)
            res = invoke([a.format(st=st, tmp=world["root"]) for a in cmd])
            gold = cmd[0] == "gold"

            def oracle(res, says=says, agree=cmd[0] == "agree"):
                if says and says not in res.stderr:
                    return f"no warning saying {says!r}: {res.stderr[:200]!r}"
                if agree and not says and json.loads(res.stdout) != json.loads(clean.stdout):
                    return "the agreement differs from the unedited study's"
                return None

            must_fail = refused or (gold and bool(says))
            judge(f"{' '.join(cmd[:2])} <- {name}", res, must_fail=must_fail, oracle=oracle, must_pass=not must_fail)


#: campaign 6 N35/N31: release folders renamed to a look-alike of a release name, or deleted under a later one
RELEASE_EDITS = [
    ("v2 -> v2+ZWSP", lambda g: (g / "v2").rename(g / "v2\u200b"), True),
    ("v2 -> V2", lambda g: (g / "v2").rename(g / "V2"), True),
    ("v2 -> ' v2'", lambda g: (g / "v2").rename(g / " v2"), True),
    ("v2 -> v02", lambda g: (g / "v2").rename(g / "v02"), False),
    ("v1 deleted", lambda g: shutil.rmtree(g / "v1"), False),
]
RELEASE_READERS = [
    ["score", "--study", "{st}", "--predictions", "{predictions}"],
    ["gold", "list", "--study", "{st}"],
    ["report", "--study", "{st}", "--format", "markdown", "-o", "{tmp}/r.md", "--no-supplement"],
    ["gold", "export", "--study", "{st}", "--force"],
]


def test_release_folders_renamed_or_deleted_are_named_by_every_reader(world, failures):
    """A folder under gold/ that reads as a release but is not one is refused in one line by every
    reader of the releases; v02 is release 2 (the oracle: score reads release v02, the latest); a
    release deleted under a later one that names it as previous is a warning naming both for the
    readers (the oracle), and refused by gold export (--force too)."""
    for name, edit, refused in RELEASE_EDITS:
        for cmd in RELEASE_READERS:
            st = fresh_copy(world, "release", "released")
            assert invoke(["gold", "export", "--study", st, "--force"]).exit_code == 0  # v2, previous v1
            for f in (st / "gold" / "v1").iterdir():
                f.chmod(0o644)
            edit(st / "gold")
            args = [a.format(st=st, tmp=world["root"], predictions=world["good"]["predictions"]) for a in cmd]
            res = invoke(args)
            chain = name == "v1 deleted"

            def oracle(res, chain=chain, score=cmd[0] == "score", st=st):
                if chain and f"{st / 'gold' / 'v1'}: missing, but release v2's manifest" not in res.stderr:
                    return f"no warning naming the missing v1 and v2's manifest: {res.stderr[:200]!r}"
                if score and not chain and "(v02)" not in res.stdout:
                    return f"score did not read release v02, the latest: {res.stdout[:200]!r}"
                return None

            must_fail = refused or (chain and cmd[0] == "gold" and cmd[1] == "export")
            judge(f"{' '.join(cmd[:2])} <- {name}", res, must_fail=must_fail, oracle=oracle, must_pass=not must_fail)


# --------------------------------------------------------------------------- hostile text, correct results


def _csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_pull_keeps_every_rationale_and_id_exactly(world, failures):
    """Hostile rationales and item ids pulled from exports read back exactly from
    ratings.csv, with goldboard's reader, Python's csv module and pandas."""
    for seed in range(40):
        rng = random.Random(seed)
        raw_items = [f"{hostile.mixed(rng, 1).strip() or 'x'}{n}::m" for n in range(4)]
        items = [_visible_id(x) for x in raw_items]
        if items != raw_items:  # an id holding a hidden character: refused (issue 23), the rest kept exactly
            _pull_refuses_hidden_ids(world, seed, raw_items)
        want = {}
        files = {}
        for rater in RATERS:
            rows = []
            for item in items:
                rationale = hostile.mixed(rng, rng.randint(1, 3))
                if seed % 10 == 0 and item == items[0]:
                    rationale = hostile.HUGE
                label = rng.choice(LABELS)
                rows.append((item, label, rationale))
                want[(item, rater)] = (label, rationale)
            f = world["root"] / f"pull_{seed}_{rater}.json"
            f.write_text(json.dumps(export(rater, rows), ensure_ascii=seed % 2 == 0), encoding="utf-8")
            files[rater] = f
        st = fresh_copy(world, f"pull{seed}", "skeleton")

        def oracle(res, st=st, want=want):
            path = Study.open(st).ratings_path(1)
            # the rationale is required: a blank one makes the annotation invalid, kept verbatim in invalid.csv
            blank = {k for k, (_, r) in want.items() if not r.strip()}
            want = {k: v for k, v in want.items() if k not in blank}
            invalid = read_csv_frame(Study.open(st).invalid_path(1))
            held = {(r["item_id"], r["rater"]) for r in invalid.to_dict("records")}
            if held != blank:
                return f"invalid.csv holds {sorted(held)!r:.200}, expected the blank rationales {sorted(blank)!r:.200}"
            for r in invalid.to_dict("records"):
                rationale = next(
                    x["value"]["text"][0] for x in json.loads(r["result"]) if x["from_name"] == "rationale"
                )
                if rationale.strip():
                    return f"invalid.csv: rationale {rationale!r} is not blank"
            df = read_ratings_csv(path)
            with open(path, encoding="utf-8", newline="") as fh:
                rows = list(csv.DictReader(fh))
            pdf = pd.read_csv(path, dtype=str, keep_default_na=False)
            for name, table in (
                ("read_ratings_csv", df.to_dict("records")),
                ("csv module", rows),
                ("pandas", pdf.to_dict("records")),
            ):
                got = {
                    (r["item_id"], r["rater"]): (r["value"], r["rationale"])
                    for r in table
                    if r["field"] == "safety_label"
                }
                if got != want:
                    bad = next(k for k in want if got.get(k) != want[k])
                    return f"{name}: {bad!r} read back as {got.get(bad)!r:.120}, pulled {want[bad]!r:.120}"
            return None

        judge(f"pull hostile seed {seed}", invoke(pull_args(st, files)), must_fail=False, oracle=oracle, must_pass=True)


def _hidden_char(ch: str) -> bool:
    """Oracle (by Unicode category, not goldboard's rule): a character no reader sees or that
    breaks a line -- control, format, line/paragraph separator -- or a variation selector."""
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") or 0xFE00 <= ord(ch) <= 0xFE0F


def _visible_id(item: str) -> str:
    return "".join(ch for ch in item if not _hidden_char(ch)) or "x"


def _pull_refuses_hidden_ids(world, seed: int, items: list[str]) -> None:
    """Item ids holding a hidden character (a zero-width space, a tab, U+2029 ...) are refused in
    one line naming the task and a code point the ids hold; nothing is written."""
    files = {}
    for rater in RATERS:
        f = world["root"] / f"pull_hidden_{seed}_{rater}.json"
        f.write_text(json.dumps(export(rater, [(it, S, "why") for it in items])), encoding="utf-8")
        files[rater] = f
    st = fresh_copy(world, f"pull_hidden{seed}", "skeleton")
    before = _tree(st)
    res = invoke(pull_args(st, files))
    codes = {f"U+{ord(ch):04X}" for it in items for ch in it if _hidden_char(ch)}
    if judge(f"pull hidden ids seed {seed}", res, must_fail=True) == "error":
        line = res.stderr.strip()
        if "contains invisible or control character" not in line or not any(c in line for c in codes):
            FAILURES.append(f"pull hidden ids seed {seed}: refused, but not for the hidden character: {line[:200]}")
        if _tree(st) != before:
            FAILURES.append(f"pull hidden ids seed {seed}: refused, but the study's files changed")


def cell(v) -> str:
    """How a JSON scalar is spelled in goldboard's tables."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


JSON_JUNK = [None, 0, -1, 1.5, True, "", "x", "=1+1", [], {}, [None], {"": None}, "\u2028", hostile.HUGE[:1000]]


def to_json_min(tasks: list[dict]) -> list[dict]:
    """Label Studio's JSON_MIN export of ``tasks``: one flat row per annotation."""
    rows = []
    for t in tasks:
        for a in t["annotations"]:
            row = {**t["data"], "id": t["id"], "annotator": a["completed_by"], "annotation_id": a["id"]}
            for r in a["result"]:
                v = r["value"]
                key = "choices" if "choices" in v else "text"
                row[r["from_name"]] = v[key][0] if len(v[key]) == 1 else {key: v[key]}
            row.update(created_at=a["created_at"], updated_at=a["updated_at"], lead_time=a["lead_time"])
            rows.append(row)
    return rows


def _paths(obj, prefix=()):
    """Every path (tuple of keys/indices) inside a JSON value."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _set(obj, path, value):
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def test_pull_mutated_exports_never_lose_an_annotation(world, failures):
    """A Label Studio export with one value replaced by junk anywhere (ids, results,
    choices, text, dates): a clean error, or every annotation ends up in ratings.csv or
    invalid.csv -- none silently dropped -- and the ratings hold only schema values."""
    from goldboard.label_configs.schema import load_schema

    allowed = set(load_schema("mtb").field("safety_label").categories)
    full = export("onc_a", [(f"C{n}::m", BASE_A[n - 1], f"why {n}") for n in range(1, 5)])
    json_min = to_json_min(full)
    rng = random.Random(6000)
    for k in range(150):
        base = json_min if k % 3 == 2 else full  # a third of the mutants are JSON_MIN exports
        paths = [p for p in _paths(base) if p]
        data = json.loads(json.dumps(base))
        path = rng.choice(paths)
        junk = rng.choice(JSON_JUNK)
        _set(data, path, json.loads(json.dumps(junk)))
        f = world["root"] / f"mutant_{k}.json"
        f.write_text(json.dumps(data), encoding="utf-8")
        st = fresh_copy(world, "mutant", "skeleton")
        ann_ids = set()
        for t in data if isinstance(data, list) else []:
            if base is json_min:  # one row per annotation
                if (
                    isinstance(t, dict)
                    and t.get("annotation_id") not in (None, "")
                    and not isinstance(t.get("annotation_id"), (list, dict))
                ):
                    ann_ids.add(cell(t["annotation_id"]))
                continue
            anns = t.get("annotations") if isinstance(t, dict) else None
            for a in anns if isinstance(anns, list) else []:
                if isinstance(a, dict) and a.get("id") is not None and not a.get("was_cancelled"):
                    ann_ids.add(cell(a.get("id")))

        def oracle(res, st=st, ann_ids=ann_ids):
            ratings = read_ratings_csv(Study.open(st).ratings_path(1))
            invalid = read_csv_frame(Study.open(st).invalid_path(1))
            bad = set(ratings.loc[ratings.field == "safety_label", "value"]) - allowed
            if bad:
                return f"ratings hold values outside the schema: {bad!r:.100}"
            seen = set(ratings["annotation_id"]) | set(invalid["annotation_id"])
            lost = {a for a in ann_ids if a not in seen}
            return f"annotations {sorted(lost)!r:.100} are neither in ratings.csv nor invalid.csv" if lost else None

        res = invoke(["pull", "--study", st, "--quiet", "--from-export", f"onc_a={f}"])
        judge(f"pull mutant {k} {path}={junk!r:.20}", res, must_fail=False, oracle=oracle)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.suffix != ".lock"
    }


def _refused_export_inputs() -> list[tuple[str, list[dict]]]:
    """Exports every file source is refused for (issue 23, j23: E00-E11): twins, invisible
    characters, placeholders, a time that is no time, no annotation, no valid annotation."""
    rows = [(f"C{n}::m", BASE_A[n - 1], f"why {n}") for n in range(1, 5)]
    out = []
    for a, b in [("C1::m", "c1::m"), ("7", "007"), ("7", "7.0"), ("C1::m", "C1::m\u200b"), ("C1::m", "C1::\u2066m")]:
        out.append((f"twins {a!r}/{b!r}", export("onc_a", [(a, S, "x"), (b, U, "y"), *rows[2:]])))
    for junk in ["NA", "#N/A", "1.23E+05"]:
        out.append((f"placeholder id {junk!r}", export("onc_a", [(junk, S, "x"), *rows[1:]])))
    for when in ["yesterday", "now", "today", "2026-13-45", "", 0, 1.5, True, ["2026-01-01"], {"t": 1}]:
        data = export("onc_a", rows)
        data[1]["annotations"][0][random.Random(str(when)).choice(["created_at", "updated_at"])] = when
        out.append((f"annotation time {when!r}", data))
    out.append(("empty export", []))
    out.append(("tasks without annotations", [{**t, "annotations": []} for t in export("onc_a", rows)]))
    nothing_valid = export("onc_a", rows)
    for t in nothing_valid:
        t["annotations"][0]["result"] = [ch("safety_label", "Maybe")]
    out.append(("no valid annotation", nothing_valid))
    return out


def test_refused_export_pulls_change_nothing(world, failures):
    """Each export above is refused with one line, and the oracle: the study is byte for byte as
    it was (no round, ratings, invalid.csv, pull.json or units written by the refused pull)."""
    for name, data in _refused_export_inputs():
        f = world["root"] / "refused.json"
        f.write_text(json.dumps(data), encoding="utf-8")
        st = fresh_copy(world, "refused", "skeleton")
        before = _tree(st)
        res = invoke(["pull", "--study", st, "--quiet", "--from-export", f"onc_a={f}"])
        if judge(f"pull --from-export refused: {name}", res, must_fail=True) == "error" and _tree(st) != before:
            FAILURES.append(f"pull --from-export refused: {name}: the refused pull changed the study")


def _ratings_and_invalid(st: Path) -> tuple[list[dict], list[dict]]:
    r = _csv_rows(Path(st, "rounds/1/ratings.csv").read_text(encoding="utf-8"))
    i = _csv_rows(Path(st, "rounds/1/invalid.csv").read_text(encoding="utf-8"))
    return r, i


def test_campaign7b_export_shapes_and_score_columns(world, failures):
    """Campaign 7b (issue 23, j7), each with its oracle: X21 the same exports pulled into round 2
    (refused, the study byte for byte unchanged); X20 an annotation rejected in review (held out
    with its reason, never a rating); X08 --item-key beside a differing data.item_id (items named by
    the key, said once); S08 a ';'-separated predictions CSV (named as such); S05 a label-mode
    confidence and per-label probabilities (said to be unused)."""
    root, good = world["root"], world["good"]
    st = fresh_copy(world, "x21")
    study = Study.open(st)
    study.get_or_add_round(2).projects = dict(PROJECTS)  # round 2 recorded with round 1's projects
    study.save()
    before = _tree(st)
    res = invoke(pull_args(st, {"onc_a": good["export_a"], "onc_b": root / "onc_b.json"}) + ["--round", "2"])
    if judge("pull --round 2 of round 1's exports", res, must_fail=True) == "error" and _tree(st) != before:
        FAILURES.append("pull --round 2 of round 1's exports: the refused pull changed the study")
    rows = [(f"C{n}::m", BASE_A[n - 1], f"why {n}") for n in range(1, 5)]
    for review in ({"review_result": "rejected"}, {"reviews": [{"id": 1, "accepted": False}]}):
        data = export("onc_a", rows)
        data[1]["annotations"][0].update(review)
        f = root / "x20.json"
        f.write_text(json.dumps(data), encoding="utf-8")
        st = fresh_copy(world, "x20", "skeleton")

        def rejected_held_out(res, st=st):
            r, i = _ratings_and_invalid(st)
            if any(x["item_id"] == "C2::m" for x in r):
                return "the annotation rejected in review became a rating"
            if [x["reason"][:18] for x in i] != ["rejected in review"]:
                return f"invalid.csv does not hold it as rejected: {[x['reason'] for x in i]}"
            return None

        judge(f"pull --from-export rejected in review {review}", invoke(pull_args(st, {"onc_a": f})),
              must_fail=False, oracle=rejected_held_out, must_pass=True)  # fmt: skip
    data = export("onc_a", rows)
    for t in data:
        t["data"]["case_id"] = "K-" + t["data"]["item_id"].split("::")[0]
    f = root / "x08.json"
    f.write_text(json.dumps(data), encoding="utf-8")
    st = fresh_copy(world, "x08", "skeleton")

    def key_wins(res, st=st):
        items = {x["item_id"] for x in _ratings_and_invalid(st)[0]}
        if items != {f"K-C{n}" for n in range(1, 5)}:
            return f"items are not the --item-key's values: {sorted(items)}"
        return None if "differs from their case_id" in res.output else "the differing item_id was not said"

    args = pull_args(st, {"onc_a": f}) + ["--item-key", "case_id", "--rater", "2=onc_a"]
    judge("pull --item-key beside a differing item_id", invoke(args), must_fail=False, oracle=key_wins, must_pass=True)
    semi = root / "semi.csv"
    semi.write_bytes(
        b"\xef\xbb\xbfcase_id;predicted_label\r\n" + b"".join(f"C{n};{S}\r\n".encode() for n in range(1, 9))
    )
    res = invoke(["score", "--gold", good["reference"], "--schema", "mtb", "--predictions", semi])
    if (
        judge("score --predictions ';'-separated", res, must_fail=True) == "error"
        and "separated by ';'" not in res.stderr
    ):
        FAILURES.append(f"score --predictions ';'-separated: the error does not name the ';': {res.stderr[:200]}")
    probs = root / "probs.jsonl"
    probs.write_text("".join(json.dumps({"case_id": f"C{n}", "predicted_label": S, "confidence": 1.7,
                                         "probabilities": {S: 0.9, U: 0.9}}) + "\n" for n in range(1, 9)))  # fmt: skip

    def said_unused(res):
        out = res.output
        ok = out.count("confidence: not used") == 1 and out.count("probabilities: not used") == 1
        return None if ok else "the unused confidence/probabilities columns were not each said once"

    res = invoke(["score", "--gold", good["reference"], "--schema", "mtb", "--predictions", probs])
    judge("score with unused confidence/probabilities", res, must_fail=False, oracle=said_unused, must_pass=True)


def test_refused_study_commands_change_nothing(world, failures):
    """Commands that write into a study, given a bad input, refuse it with one line -- and the
    oracle: the study is byte for byte as it was (issue 23, j23: J05/K11, E13/E14, W14, Y01)."""
    labels = world["root"] / "judge_labels.csv"
    labels.write_text("item_id,field,value\n" + "".join(f"{i},safety_label,{S}\n" for i in world["items"]))
    other_field = world["root"] / "judge_other.csv"
    other_field.write_text(f"item_id,field,value\n{world['items'][0]},missing_info,stage\n")
    export_a = world["good"]["export_a"]
    cases = [(f"judge --epsilon {e}", ["judge", "--judge", "bench", "--labels", labels, "--epsilon", e])
             for e in ["-1", "1.5", "1", "-0.001", "nan", "inf", "-inf"]]  # fmt: skip
    cases += [
        ("judge labels without the field", ["judge", "--judge", "bench", "--labels", other_field, "--epsilon", "0.2"]),
        ("judge named like a rater", ["judge", "--judge", "onc_a", "--labels", labels, "--epsilon", "0.2"]),
        ("plan size --field without --from-study",
         ["plan", "size", "--kappa", "0.6", "--prevalence", "0.3", "--lower", "0.4", "--field", "x"]),
        ("pull the same export twice", ["pull", "--from-export", f"onc_a={export_a}", "--from-export",
                                        f"onc_b={export_a}", "--round", "2", "--item-key", "case_id"]),
        ("add-rater named like a judge", ["study", "add-rater", "{study}", "judge_x", "--no-account"]),
        ("plan size --from-study with every input typed (campaign 7, R16)",
         ["plan", "size", "--from-study", "--kappa", "0.7", "--prevalence", "0.5,0.5", "--lower", "0.5"]),
        ("plan size --from-study --alpha-min with --least-frequent (R16)",
         ["plan", "size", "--from-study", "--alpha-min", "0.8", "--least-frequent", "0.2"]),
        ("gold diff of a release with itself (R13)", ["gold", "diff", "v1", "v1"]),
    ]  # fmt: skip
    for name, args in cases:
        st = fresh_copy(world, "refused_cmd", "released")
        if "judge_x" in args:  # a recorded judge first
            assert invoke(["judge", "--study", st, "--judge", "judge_x", "--labels", labels, "--epsilon", "0.2"])
        before = _tree(st)
        argv = [st if a == "{study}" else a for a in args]
        if argv[:2] != ["study", "add-rater"]:
            argv = (
                [*argv[:2], "--study", st, *argv[2:]]
                if argv[0] in ("plan", "gold")
                else [argv[0], "--study", st, *argv[1:]]
            )
        res = invoke(argv)
        if judge(f"refused study command: {name}", res, must_fail=True) == "error" and _tree(st) != before:
            FAILURES.append(f"refused study command: {name}: the refused command changed the study")


def _expected_flagged(table: pd.DataFrame) -> set[str]:
    lab = table[table.field == "safety_label"].pivot(index="item_id", columns="rater", values="value")
    return {i for i, r in lab.iterrows() if r["onc_a"] != r["onc_b"]}


#: the blanks around an id that are no part of it (README: "the blanks around an id are stripped")
ID_BLANKS = " \t\r\n\u00a0"


def test_flag_and_agree_on_hostile_tables(world, failures):
    """A ratings table whose item ids and rationales are hostile: flag lists exactly the
    disagreeing items (ids read back from its CSV exactly, the blanks around them stripped),
    agree counts exactly; a table whose ids hold a hidden character is refused naming one."""
    for seed in range(40):
        rng = random.Random(1000 + seed)
        rows = []
        n = rng.randint(3, 8)
        raw = [f"{hostile.mixed(rng, 2)}#{k}".strip(ID_BLANKS) for k in range(n)]
        if any(_hidden_char(ch) for item in raw for ch in item):
            _plain_refuses_hidden_ids(world, seed, raw)
        for k in range(n):
            item = _visible_id(raw[k])
            for rater in RATERS:
                rows.append(
                    {
                        "round": 1,
                        "item_id": item,
                        "case_id": item,
                        "rater": rater,
                        "field": "safety_label",
                        "value": rng.choice(LABELS[:2]),
                        "rationale": hostile.mixed(rng),
                    }
                )
        table = pd.DataFrame(rows).reindex(columns=RATINGS_COLUMNS).astype(object).where(lambda d: d.notna(), "")
        f = world["root"] / f"ratings_{seed}.csv"
        f.write_text(csv_text(table), encoding="utf-8", newline="")
        want = _expected_flagged(table)

        def flag_oracle(res, want=want):
            got = {r["item_id"] for r in _csv_rows(res.stdout_bytes.decode("utf-8"))}
            return None if got == want else f"flagged {sorted(got)!r:.200} instead of {sorted(want)!r:.200}"

        judge(
            f"flag hostile seed {seed}",
            invoke(["flag", f, "--schema", "mtb", "--format", "csv"]),
            must_fail=False,
            oracle=flag_oracle,
            must_pass=True,
        )
        agree_n = n
        agree_pa = 1 - len(want) / n

        def agree_oracle(res, n=agree_n, pa=agree_pa):
            data = json.loads(res.stdout)
            st = next(s for s in data["statistics"] if s["statistic"] == "percent_agreement" and s["group"] is None)
            if st["n_items"] != n or abs(st["value"] - pa) > 1e-12:
                return f"percent agreement {st['value']} on {st['n_items']} items, expected {pa} on {n}"
            return None

        judge(
            f"agree hostile seed {seed}",
            invoke(["agree", f, "--field", "safety_label", "--schema", "mtb", "--format", "json"]),
            must_fail=False,
            oracle=agree_oracle,
            must_pass=True,
        )


def _plain_table(path: Path, items: list[str], a: list[str], b: list[str], rater_b: str = "onc_b") -> Path:
    rows = [
        {"item_id": it, "rater": r, "field": "safety_label", "value": v}
        for it, va, vb in zip(items, a, b)
        for r, v in (("onc_a", va), (rater_b, vb))
    ]
    path.write_text(
        csv_text(pd.DataFrame(rows).reindex(columns=RATINGS_COLUMNS).astype(object).where(lambda d: d.notna(), "")),
        encoding="utf-8",
    )
    return path


def _plain_refuses_hidden_ids(world, seed: int, items: list[str]) -> None:
    """flag and agree refuse a plain table whose item ids hold a hidden character, in one line
    naming a code point the ids hold."""
    f = _plain_table(world["root"] / f"plain_hidden_{seed}.csv", items, [S] * len(items), [S] * len(items))
    codes = {f"U+{ord(ch):04X}" for it in items for ch in it if _hidden_char(ch)}
    for cmd in (["flag", f, "--schema", "mtb", "--format", "csv"], ["agree", f, "--schema", "mtb"]):
        res = invoke(cmd)
        if judge(f"{cmd[0]} plain hidden ids seed {seed}", res, must_fail=True) == "error":
            line = res.stderr.strip()
            if "invisible or control character" not in line or not any(c in line for c in codes):
                FAILURES.append(
                    f"{cmd[0]} plain hidden ids seed {seed}: refused, not for the hidden character: {line[:200]}"
                )


def _twin_of(rng: random.Random, item: str) -> tuple[str, str]:
    """A twin of ``item`` by the id rules, made independently: another letter case, the NFD form,
    a zero-width character inside, or (a number) leading zeros / a decimal point."""
    if item.isdigit():
        return rng.choice([("0" + item, "number"), (item + ".0", "number"), ("00" + item, "number")])
    kinds = [("case", item.swapcase())] if item.swapcase() != item else []
    if unicodedata.normalize("NFD", item) != item:
        kinds.append(("Unicode form", unicodedata.normalize("NFD", item)))
    cut = rng.randint(1, len(item) - 1) if len(item) > 1 else 1
    zw = rng.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
    kinds.append((f"U+{ord(zw):04X}", item[:cut] + zw + item[cut:]))
    kind, twin = rng.choice(kinds)
    return twin, kind


def test_plain_ratings_with_twin_item_ids_are_refused(world, failures):
    """flag, agree and judge on a plain table where one rater wrote an item id as a twin of the
    other's (issue 23): refused in one line naming both lines (CSV line 2k and 2k+1 of item k)
    and the kind of difference; the table with the ids written one way gives the right result."""
    words = ["MTB-001", "case_a", "Zoë", "Café", "ÅRHUS-7", "item", "x1", "Ωmega", "q"]
    for seed in range(30):
        rng = random.Random(5000 + seed)
        n = rng.randint(3, 7)
        items = [
            rng.choice(words) + f"-{k}" if rng.random() < 0.7 else str(rng.randint(1, 999) * 10 + k) for k in range(n)
        ]
        items = [unicodedata.normalize("NFC", it) for it in items]
        a = [rng.choice(LABELS[:2]) for _ in items]
        b = [rng.choice(LABELS[:2]) for _ in items]
        k = rng.randrange(n)
        twin, kind = _twin_of(rng, items[k])
        b_items = items[:k] + [twin] + items[k + 1 :]
        bad = world["root"] / f"plain_twins_{seed}.csv"
        rows = [{"item_id": it, "rater": "onc_a", "field": "safety_label", "value": v} for it, v in zip(items, a)]
        rows += [{"item_id": it, "rater": "gpt", "field": "safety_label", "value": v} for it, v in zip(b_items, b)]
        bad.write_text(
            csv_text(pd.DataFrame(rows).reindex(columns=RATINGS_COLUMNS).astype(object).where(lambda d: d.notna(), "")),
            encoding="utf-8",
        )
        lines = (f"{bad}:{k + 2}", f"{bad}:{n + k + 2}")  # onc_a's rows first, then gpt's
        words_of = {"case": "letter case", "number": "how a number is written", "Unicode form": "Unicode form"}
        for cmd in (
            ["flag", bad, "--schema", "mtb", "--format", "csv"],
            ["agree", bad, "--schema", "mtb", "--field", "safety_label"],
            ["judge", bad, "--judge", "gpt", "--epsilon", "0.2"],
        ):
            res = invoke(cmd)
            if judge(f"{cmd[0]} twin ids seed {seed} ({kind})", res, must_fail=True) == "error":
                line = res.stderr.strip()
                if not (line.startswith(f"Error: {lines[1]}: item_id ") and f"({lines[0]})" in line):
                    FAILURES.append(f"{cmd[0]} twin ids seed {seed}: not naming both lines {lines}: {line[:250]}")
                elif words_of.get(kind, kind) not in line:
                    FAILURES.append(f"{cmd[0]} twin ids seed {seed}: not naming the difference {kind}: {line[:250]}")
        good = _plain_table(world["root"] / f"plain_ok_{seed}.csv", items, a, b)
        want = {it for it, x, y in zip(items, a, b) if x != y}

        def flag_oracle(res, want=want):
            got = {r["item_id"] for r in _csv_rows(res.stdout_bytes.decode("utf-8"))}
            return None if got == want else f"flagged {sorted(got)!r:.200} instead of {sorted(want)!r:.200}"

        judge(
            f"flag twin-free seed {seed}",
            invoke(["flag", good, "--schema", "mtb", "--format", "csv"]),
            must_fail=False,
            oracle=flag_oracle,
            must_pass=True,
        )


def _xlsx_legal(text: str) -> str:
    """What openpyxl can store: the corpus minus C0 controls (xlsx cannot hold them)."""
    return "".join(ch for ch in text if not ("\x00" <= ch < "\x20" and ch not in "\t\n\r"))


def test_adjudication_reasons_and_gold_read_back_exactly(world, failures):
    """Hostile reasons typed into the review sheet: the decisions log and every gold
    format read them back exactly (a reason starting with = is a formula: refused by cell)."""
    for seed in range(12):
        rng = random.Random(2000 + seed)
        st = fresh_copy(world, f"adj{seed}")
        sheet = world["root"] / f"review_{seed}.xlsx"
        shutil.copy(world["good"]["sheet"], sheet)
        wb = openpyxl.load_workbook(sheet)
        ws = wb["Disagreements"]
        head = [c.value for c in ws[1]]
        typed = {}
        formula = False
        for row in ws.iter_rows(min_row=2):
            rec = dict(zip(head, row))
            if rec["Field"].value != "safety_label":
                continue
            reason = _xlsx_legal(hostile.mixed(rng, 2)).strip() or "ok"
            # Insufficient Information: allowed with any missing_info (Unsupported would break the mtb rule
            # missing_info_needs_insufficiency where the raters ticked missing information)
            rec["Decision"].value = I
            rec["Reason"].value = reason
            rec["Adjudicator"].value = "dr_chair"
            formula = formula or reason.startswith("=")
            typed[rec["Item ID"].value] = reason
        wb.save(sheet)

        def oracle(res, st=st, typed=typed):
            dec = {d["item_id"]: d["reason"] for d in read_decisions(Study.open(st).decisions_path)}
            if dec != typed:
                bad = next(k for k in typed if dec.get(k) != typed[k])
                return f"decision reason for {bad!r} read back as {dec.get(bad)!r:.100}, typed {typed[bad]!r:.100}"
            for fmt in ("csv", "jsonl", "json", "xlsx"):
                r = invoke(["gold", "export", "--study", st, "--format", fmt, "--force"])
                if r.exit_code != 0:
                    return f"gold export --format {fmt} failed: {r.output[:200]}"
            from goldboard.exports.gold import read_release

            for v in sorted((Path(st) / "gold").iterdir()):
                gold, _ = read_release(v)
                got = {r.item_id: r.reason for r in gold.itertuples() if r.field == "safety_label" and r.reason}
                if got != typed:
                    return f"gold {v.name} reasons differ: {set(got.items()) ^ set(typed.items())!r:.200}"
            with open(Path(st) / "gold" / "v1" / "gold.csv", encoding="utf-8", newline="") as fh:
                got = {
                    r["item_id"]: r["reason"]
                    for r in csv.DictReader(fh)
                    if r["field"] == "safety_label" and r["reason"]
                }
            return None if got == typed else "gold.csv read by the csv module differs"

        res = invoke(["adjudicate", "import", "--study", st, sheet, "--adjudicator", "dr_chair"])  # the cells' name
        if formula:
            judge(f"import formula reason seed {seed}", res, must_fail=True, listing=True)
        else:
            judge(f"import hostile reasons seed {seed}", res, must_fail=False, oracle=oracle, must_pass=True)


CELL_JUNK = [
    None,
    0,
    -3.5,
    True,
    "",
    " ",
    "=1+1",
    "=SUM(A1:A2)",
    "Unsupported",
    "unsupported ",
    "none",
    "stage|x",
    "\u202e",
]


def test_import_mutated_review_workbooks(world, failures):
    """A review workbook with one cell anywhere on the Disagreements sheet replaced (ids,
    keys, decisions, reasons, numbers, formulas): a clean error naming cells, or exactly the
    decisions the sheet holds are logged, with the reasons as typed."""
    import datetime as dt

    from goldboard.label_configs.schema import load_schema

    schema = load_schema("mtb")
    rng = random.Random(7000)
    for k in range(40):
        sheet = world["root"] / f"mutant_sheet_{k}.xlsx"
        shutil.copy(world["good"]["sheet"], sheet)
        wb = openpyxl.load_workbook(sheet)
        ws = wb["Disagreements"]
        head = [c.value for c in ws[1]]
        for row in ws.iter_rows(min_row=2):
            rec = dict(zip(head, row))
            if rec["Field"].value == "safety_label":
                rec["Decision"].value = U
                rec["Reason"].value = f"reason {rec['Item ID'].value}"
                rec["Adjudicator"].value = "dr_chair"
        r = rng.randint(1, ws.max_row)
        c = rng.randint(1, ws.max_column)
        junk = rng.choice(CELL_JUNK + [dt.datetime(2026, 1, 1), hostile.mixed(rng)])
        if isinstance(junk, str):
            junk = _xlsx_legal(junk)
        ws.cell(row=r, column=c).value = junk
        wb.save(sheet)
        st = fresh_copy(world, "mutant_import")
        # what the sheet now asks for, read independently of goldboard
        wb = openpyxl.load_workbook(sheet)
        ws = wb["Disagreements"]
        want = {}
        for row in ws.iter_rows(min_row=2, values_only=True):
            rec = dict(zip([c.value for c in ws[1]], row))
            if rec.get("Decision") not in (None, "") and str(rec["Decision"]).strip():
                want[(rec.get("Item ID"), rec.get("Field"))] = str(rec.get("Reason") or "").strip()

        def oracle(res, st=st, want=want):
            got = {}
            for d in read_decisions(Study.open(st).decisions_path):
                got[(d["item_id"], d["field"])] = d["reason"]
                f = schema.field(d["field"])
                if d["decision"] not in f.categories + ["unresolved"] and f.kind != "multi":
                    return f"decision {d['decision']!r} is not a value of {d['field']}"
            return None if got == want else f"logged {got!r:.200}, the sheet holds {want!r:.200}"

        res = invoke(["adjudicate", "import", "--study", st, sheet, "--adjudicator", "dr_chair"])  # the cells' name
        judge(f"import mutant {k} cell ({r},{c})={junk!r:.20}", res, must_fail=False, oracle=oracle, listing=True)


def test_gold_export_from_mutated_ratings(world, failures):
    """The study's ratings.csv with one cell replaced (value, rater, item id, field, round):
    gold export is a clean error, or every unanimous gold value is what every rater of the
    item gave in the file (read with the csv module) and every gold value is in the schema."""
    from goldboard.exports.gold import read_release
    from goldboard.label_configs.schema import load_schema

    schema = load_schema("mtb")
    src = world["study"] / "rounds" / "1" / "ratings.csv"
    with open(src, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    junk_values = ["", " ", "Zzz", "unsupported", "Supported ", "onc_c", "x", "-1", "2", "=1+1", "C1::m", "\u2028"]
    rng = random.Random(8000)
    for k in range(40):
        mutated = [list(r) for r in rows]
        r = rng.randint(1, len(rows) - 1)
        c = rng.randrange(len(rows[0]))
        mutated[r][c] = rng.choice(junk_values)
        st = fresh_copy(world, "mutant_gold")
        with open(st / "rounds" / "1" / "ratings.csv", "w", encoding="utf-8", newline="") as fh:
            csv.writer(fh, lineterminator="\r\n").writerows(mutated)
        table = [dict(zip(mutated[0], x)) for x in mutated[1:]]

        def oracle(res, st=st, table=table):
            gold, _ = read_release(Study.open(st).gold_dir / "v1")
            for g in gold.to_dict("records"):
                f = schema.field(g["field"])
                if g["gold_value"] and f.kind != "multi" and g["gold_value"] not in f.categories:
                    return f"gold value {g['gold_value']!r} of {g['item_id']} is not in the schema"
                if g["method"] == "unanimous" and f.kind != "multi":
                    given = {
                        f.normalize(x["value"])
                        for x in table
                        if x["item_id"].strip() == g["item_id"] and x["field"].strip() == g["field"]
                    }
                    if given != {g["gold_value"]}:
                        return f"{g['item_id']}: unanimous gold {g['gold_value']!r} but the raters gave {given!r}"
            return None

        res = invoke(["gold", "export", "--study", st])
        judge(f"gold export mutant {k} ({r},{mutated[0][c]})", res, must_fail=False, oracle=oracle)


def _hidden(name: str) -> bool:
    """Whether ``name`` holds a control (Cc) or invisible format (Cf) character."""
    return any(unicodedata.category(c) in ("Cc", "Cf") for c in name)


def _look_alike(names: list[str]) -> bool:
    """Whether two of ``names`` read the same once invisible characters are dropped, the Unicode
    form is NFC and case is folded (one model or rater written two ways)."""
    keys = [
        unicodedata.normalize("NFC", "".join(c for c in n if unicodedata.category(c) != "Cf")).casefold() for n in names
    ]
    return len(set(keys)) != len(keys)


#: a twin of a model or rater name a reader cannot tell from it (issue 23, campaign 6 S06/S07/N08, W07/W08)
TWINS = [str.upper, lambda n: unicodedata.normalize("NFD", n), lambda n: n + "\u200b"]


def test_score_with_hostile_model_names(world, failures):
    """Hostile model names: scored each under its own name (accuracies exact), or -- when a name
    holds a control or invisible character, or two names look alike -- one clean error."""
    for seed in range(26):
        rng = random.Random(3000 + seed)
        models = list(dict.fromkeys(_xlsx_legal(hostile.mixed(rng, 1)).strip() or f"m{k}" for k in range(3)))
        if seed >= 20:  # a look-alike of a plain name beside it
            plain = f"mod\u00e8le{seed}"
            models = [plain, TWINS[seed % 3](plain)]
        recs, acc = [], {}
        for m in models:
            right = 0
            for n in range(1, 9):
                pred = rng.choice(LABELS)
                right += pred == BASE_A[n - 1]
                recs.append({"case_id": f"C{n}", "model": m, "predicted_label": pred})
            acc[m] = right / 8
        f = world["root"] / f"preds_{seed}.jsonl"
        f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")

        def oracle(res, acc=acc):
            data = json.loads(res.stdout)
            got = {g["model"]: g["accuracy"]["estimate"] for g in data["groups"]}
            return None if got == acc else f"accuracies {got!r:.200} instead of {acc!r:.200}"

        refuse = any(_hidden(m) for m in models) or _look_alike(models)
        g = world["good"]
        res = invoke(["score", "--gold", g["reference"], "--schema", "mtb", "--predictions", f, "--format", "json"])
        judge(f"score hostile models seed {seed}", res, must_fail=refuse, oracle=oracle, must_pass=not refuse)


def test_flag_and_agree_refuse_look_alike_raters(world, failures):
    """A plain ratings file whose second rater is a look-alike of the first (case, NFD form,
    zero-width space): flag and agree refuse it; the same rater with blanks around it in some
    rows is that rater (flag lists exactly the disagreeing items)."""
    for k, twin in enumerate([*TWINS, lambda n: n + " ", lambda n: " " + n]):
        name = "jos\u00e9_a"
        rows = []
        for n, (a, b) in enumerate(zip(BASE_A, BASE_B), start=1):
            for rater, value in ((name, a), ("onc_b", b)):
                spelled = twin(rater) if rater == name and n % 2 else rater
                rows.append(
                    {
                        "round": 1,
                        "item_id": f"C{n}",
                        "case_id": f"C{n}",
                        "rater": spelled,
                        "field": "safety_label",
                        "value": value,
                    }
                )
        table = pd.DataFrame(rows).reindex(columns=RATINGS_COLUMNS).astype(object).where(lambda d: d.notna(), "")
        f = world["root"] / f"ratings_twin_{k}.csv"
        f.write_text(csv_text(table), encoding="utf-8", newline="")
        spaced = k >= len(TWINS)
        want = {f"C{n}" for n, (a, b) in enumerate(zip(BASE_A, BASE_B), start=1) if a != b}

        def flag_oracle(res, want=want):
            got = {r["item_id"] for r in _csv_rows(res.stdout_bytes.decode("utf-8"))}
            return None if got == want else f"flagged {sorted(got)!r:.200} instead of {sorted(want)!r:.200}"

        res = invoke(["flag", f, "--schema", "mtb", "--format", "csv"])
        judge(f"flag rater twin {k}", res, must_fail=not spaced, oracle=flag_oracle, must_pass=spaced)
        res = invoke(["agree", f, "--field", "safety_label", "--schema", "mtb", "--format", "json"])
        judge(f"agree rater twin {k}", res, must_fail=not spaced, must_pass=spaced)


def test_push_keeps_hostile_outputs_exactly(world, failures, monkeypatch):
    """Cases and outputs with hostile text pushed (to an in-memory Label Studio): units.jsonl
    and every task hold each model output exactly; a blank output is a clean error."""
    import contextlib

    from test_push_offline import FakeServer

    import goldboard.annotate.push as push_mod

    for seed in range(15):
        rng = random.Random(4000 + seed)
        fake = FakeServer()
        monkeypatch.setattr(push_mod, "connect", lambda study, fake=fake: contextlib.nullcontext(fake))
        outputs = {f"C{n}": hostile.mixed(rng, rng.randint(1, 3)) for n in range(1, 5)}
        if seed % 5 == 0:
            outputs["C1"] = hostile.HUGE
        cases = world["root"] / f"push_cases_{seed}.jsonl"
        cases.write_text(
            "".join(
                json.dumps({"case_id": c, "text": hostile.mixed(rng) + " case"}, ensure_ascii=False) + "\n"
                for c in outputs
            ),
            encoding="utf-8",
        )
        outs = world["root"] / f"push_outputs_{seed}.json"
        outs.write_text(json.dumps([{"case_id": c, "model": "m", "output": o} for c, o in outputs.items()]))
        st = Study.init(world["root"] / "runs" / f"push{seed}", "mtb", RATERS, url="http://fake")
        blank = any(not o.strip() for o in outputs.values())

        def oracle(res, st=st, fake=fake, outputs=outputs):
            units = {u["case_id"]: u["output_text"] for u in Study.open(st.path).units().to_dict("records")}
            if units != outputs:
                bad = next(c for c in outputs if units.get(c) != outputs[c])
                return f"units.jsonl output of {bad}: {units.get(bad)!r:.80} instead of {outputs[bad]!r:.80}"
            for p in fake.projects.values():
                shown = {t["case_id"]: t["output_text"] for t in p["tasks"]}
                if shown != outputs:
                    return f"project {p['id']}: task output_text differs from the output file"
            return None

        res = invoke(["push", "--study", st.path, cases, "--outputs", outs, "--quiet"])
        judge(f"push hostile seed {seed}", res, must_fail=blank, oracle=oracle, listing=True, must_pass=not blank)


def test_schema_show_strips_control_characters_from_a_hostile_schema(world, failures):
    """A schema file whose titles and descriptions hold the corpus: shown without control or
    bidi characters (terminal), exported as Label Studio XML that parses."""
    import xml.etree.ElementTree as ET
    from xml.sax.saxutils import escape

    base = world["good"]["schema"].read_text()
    for seed in range(10):
        rng = random.Random(5000 + seed)
        evil = hostile.mixed(rng, 3)
        toml_str = json.dumps(evil)  # a JSON string is a valid TOML basic string
        f = world["root"] / f"schema_{seed}.toml"
        text = base.replace('title = "', f"title = {toml_str[:-1]} ", 1) if 'title = "' in base else base
        f.write_text(text, encoding="utf-8")
        res = invoke(["schema", "show", f])

        def show_oracle(res):
            bad = set(res.stdout_bytes.decode("utf-8")) & TERMINAL_UNSAFE
            return f"terminal output holds {sorted(bad)!r}" if bad else None

        if judge(f"schema show hostile seed {seed}", res, must_fail=False, oracle=show_oracle, must_pass=True) != "ok":
            continue
        res = invoke(["schema", "config", f])

        def xml_oracle(res, evil=evil):
            try:
                ET.fromstring(res.stdout_bytes.decode("utf-8"))
            except ET.ParseError as exc:
                return f"the Label Studio XML does not parse: {exc} ({escape(evil)[:80]})"
            return None

        judge(f"schema config hostile seed {seed}", res, must_fail=False, oracle=xml_oracle, must_pass=True)


def _subtle_schemas() -> list[tuple[str, str, bytes, dict | None]]:
    """(name, file name, bytes, expected) for test_subtle_schema_files; expected None: refused."""
    head = 'name = "tri"\nversion = "1"\n'

    def fld(values, kind="nominal", name="label"):
        return f'[[fields]]\nname = "{name}"\nkind = "{kind}"\nvalues = {values}\n'

    sev = fld('["1", "2", "3"]', "ordinal", "sev")
    bnd = '[[boundaries]]\nname = "b1"\nfield = "label"\na = ["Safe"]\nb = ["Unsafe"]\npriority = {}\n'
    gap = '[[triggers]]\nkind = "gap"\nfield = "sev"\nmin_gap = {}\n'
    json_dup = '{"name": "tri", "fields": [{"name": "label", "kind": "nominal", "values": ["Safe", "Unsafe"], "kind": "ordinal"}]}'
    good = head + fld('["Safe", "Unsafe"]')
    cases = [
        ("values Safe/safe", "s.toml", head + fld('["Safe", "safe", "Unsafe"]'), None),
        ("values 4/4.0", "s.toml", head + fld('[4, "4.0", 5]', "ordinal"), None),
        ("values NFC/NFD", "s.toml", head + fld('["Caf\\u00e9", "Cafe\\u0301"]'), None),
        ("alias case-twin of another value", "s.toml", head + fld('["Safe", { value = "Unsafe", aliases = ["SAFE"] }]'), None),
        ("display = another value", "s.toml", head + fld('[{ value = "Safe", display = "Unsafe" }, "Unsafe"]'), None),
        ("boundary priority text", "s.toml", good + bnd.format('"high"'), None),
        ("boundary priority -3", "s.toml", good + bnd.format("-3"), None),
        ("version 1.10 unquoted", "s.toml", good.replace('"1"', "1.10"), None),
        ("JSON key twice", "s.json", json_dup, None),
        ("fields label/Label", "s.toml", good + fld('["Safe", "Unsafe"]', name="Label"), None),
        ("gap 7 on 3 values", "s.toml", head + sev + gap.format(7), None),
        ("ordinal with one value", "s.toml", head + fld('["1"]', "ordinal", "sev"), None),
        ("empty alias", "s.toml", head + fld('[{ value = "Safe", aliases = [""] }, "Unsafe"]'), None),
        ("required as text", "s.toml", good + 'required = "false"\n', None),
        ("JSON NaN value", "s.json", '{"name": "tri", "fields": [{"name": "s", "kind": "ordinal", "values": [1, NaN, 3]}]}', None),
        ("YAML file", "s.yaml", "name: tri\nfields:\n  - name: label\n", None),
        ("shown_when on itself", "s.toml", good + 'shown_when = { field = "label", values = ["Safe"] }\n', None),
        ("ordinal numbers out of order", "s.toml", head + fld('["1", "3", "2"]', "ordinal", "sev"), None),
        # the valid neighbours: read as written
        ("TOML with a BOM", "s.toml", "\ufeff" + good, {"version": "1", "label": ["Safe", "Unsafe"]}),
        ("JSON with a BOM", "s.json", "\ufeff" + json_dup.replace(', "kind": "ordinal"', ""), {"version": "1", "label": ["Safe", "Unsafe"]}),
        ("version 1.10 quoted", "s.toml", good.replace('"1"', '"1.10"'), {"version": "1.10", "label": ["Safe", "Unsafe"]}),
        ("alias case-twin of its own value", "s.toml", head + fld('[{ value = "safe", display = "Safe", aliases = ["SAFE"] }, "Unsafe"]'),
         {"version": "1", "label": ["safe", "Unsafe"]}),
        ("priority 1", "s.toml", good + bnd.format(1), {"version": "1", "label": ["Safe", "Unsafe"], "priority": 1}),
        ("gap 2 on 3 values", "s.toml", head + sev + gap.format(2), {"version": "1", "sev": ["1", "2", "3"], "min_gap": 2}),
    ]  # fmt: skip
    return [(n, f, t.encode("utf-8"), e) for n, f, t, e in cases]


def test_subtle_schema_files(tmp_path, failures):
    """Custom schema files with subtle errors (issue 23, campaign 7 K01-K09): each is refused in one
    line, and each valid neighbour is read as written -- the oracle: the version, the values of
    each field, the boundary priority and the gap, as written in the file."""
    for i, (name, fname, data, want) in enumerate(_subtle_schemas()):
        f = tmp_path / str(i) / fname
        f.parent.mkdir()
        f.write_bytes(data)
        res = invoke(["schema", "show", f, "--format", "json"])

        def oracle(res, want=want):
            got = json.loads(res.stdout)
            seen = {
                "version": got["version"],
                **{fd["name"]: [v["value"] for v in fd["values"]] for fd in got["fields"]},
            }
            for b in got["boundaries"]:
                seen["priority"] = b["priority"]
            for t in got["triggers"]:
                seen["min_gap"] = t["min_gap"]
            return None if seen == want else f"read as {seen!r}, written {want!r}"

        judge(f"schema show {name}", res, must_fail=want is None, oracle=None if want is None else oracle,
              must_pass=want is not None)  # fmt: skip


# --------------------------------------------------------------------------- figures


# --------------------------------------------------------------------------- what the user typed, checked


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(q.relative_to(folder)): q.read_bytes() for q in sorted(folder.rglob("*")) if q.is_file()}


def _table_study(root: Path, name: str) -> Path:
    st = root / "meaning" / name
    shutil.rmtree(st, ignore_errors=True)
    Study.init(st, schema="mtb", raters=RATERS)
    return st


def _meaning_cases(world) -> list[tuple[str, dict[str, str | bytes], list, bool, object]]:
    """(name, files to write {name: text}, argv with {st} {d} placeholders, must_fail, oracle(st, res))."""
    long_ok = "case_id,rater,safety_label\nC1,onc_a,Supported\nC1,onc_b,Unsupported\n"

    def kept(n_rows):
        def oracle(st, res):
            got = read_ratings_csv(Study.open(st).ratings_path(1))
            lab = got[got.field == "safety_label"]
            return None if len(lab) == n_rows else f"{len(lab)} labels in ratings.csv, expected {n_rows}"

        return oracle

    def held(aid, needle):
        def oracle(st, res):
            got = read_ratings_csv(Study.open(st).ratings_path(1))
            inv = read_csv_frame(Study.open(st).invalid_path(1))
            if aid in set(got["annotation_id"]):
                return f"{aid} became a rating"
            reasons = dict(zip(inv["annotation_id"], inv["reason"]))
            return None if needle in reasons.get(aid, "") else f"{aid} not held out with {needle!r}: {reasons!r:.200}"

        return oracle

    def kept_as_typed(item):
        def oracle(st, res):
            got = set(read_ratings_csv(Study.open(st).ratings_path(1))["item_id"])
            if got != {item}:
                return f"item ids {sorted(got)} in ratings.csv, expected only {item!r} as typed"
            return None if f"item id {item!r} is kept as the text typed" in res.stderr else "no warning about the id"

        return oracle

    wide = ["pull", "--study", "{st}", "--from-table", "{d}/t.csv", "--field", "safety_label", "--rater-cols"]
    blank_notes = "case_id,a,b,na,nb\n" + "".join(
        f"C{n},{LABELS[n % 4]},{LABELS[(n + 1) % 4]},{'why' if n < 2 else ''},\n" for n in range(8)
    )
    return [
        ("one column for two raters", {"t.csv": "case_id,x,y\nC1,Supported,Unsupported\n"},
         wide + ["onc_a=x,onc_b=x"], True, None),
        ("identical columns", {"t.csv": "case_id,x,y\nC1,Supported,Supported\nC2,Unsupported,Unsupported\n"},
         wide + ["onc_a=x,onc_b=y"], True, None),
        ("--rater onc_b=onc_a", {"t.csv": long_ok}, ["pull", "--study", "{st}", "--from-table", "{d}/t.csv",
         "--rater", "onc_b=onc_a"], True, None),
        ("--rater to a non-rater", {"t.csv": long_ok}, ["pull", "--study", "{st}", "--from-table", "{d}/t.csv",
         "--rater", "onc_b=onc_z"], True, None),
        ("codes: repeated code", {"t.csv": "case_id,rater,lab\nC1,onc_a,1\nC1,onc_b,2\n",
         "c.csv": "column,code,label\nlab,1,Supported\nlab,1,Unsupported\nlab,2,Unsafe\n"},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.csv", "--label-col", "lab", "--field", "safety_label",
          "--codes", "{d}/c.csv"], True, None),
        ("conflicting duplicate rows", {"t.csv": long_ok + " C1 ,onc_a,Unsupported\n"},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.csv"], True, None),
        ("identical duplicate rows", {"t.csv": long_ok + "C1,onc_a,Supported\n"},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.csv"], False, kept(2)),
        ("duplicate header", {"t.csv": "case_id,rater,safety_label,safety_label\nC1,onc_a,Supported,Unsupported\n"},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.csv"], True, None),
        ("formula without value", {"t.xlsx": [["case_id", "rater", "safety_label"], ["C1", "onc_a", "=A1"]]},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.xlsx"], True, None),
        ("date as item id", {"t.xlsx": [["case_id", "rater", "safety_label"],
                                        [__import__("datetime").datetime(2024, 3, 1), "onc_a", "Supported"]]},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.xlsx"], True, None),
        ("blank rationale cells", {"t.csv": blank_notes},
         wide + ["onc_a=a,onc_b=b", "--rationale-col", "onc_a=na,onc_b=nb"], False, kept(16)),
        ("NaN label", {"t.jsonl": '{"case_id": "C1", "rater": "onc_a", "safety_label": NaN}\n'
                                  '{"case_id": "C1", "rater": "onc_b", "safety_label": "Supported"}\n'},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.jsonl"], False, held("t.jsonl:1", "'NaN' is not a value")),
        ("control character in a label", {"t.csv": "case_id,rater,safety_label\nC1,onc_a,Supported\x1f\n"
                                                    "C1,onc_b,Supported\n"},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.csv"], False, held("t.csv:2", "control character")),
        ("field the schema lacks", {"t.csv": "item_id,rater,field,value\nC1,onc_a,mood,happy\n"
                                             "C1,onc_b,safety_label,Supported\n"},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.csv"], False, held("t.csv:2", "unknown field 'mood'")),
        ("--round 3 without 1-2", {"t.csv": long_ok},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.csv", "--round", "3"], True, None),
        ("calibrate rule beyond 1", {}, ["calibrate", "--study", world["study"], "--rule", "kappa_upper>=1.5"],
         True, None),
        ("add-raters 'onc a'", {}, ["server", "add-raters", "onc a", "--data-dir", "{d}/ls"], True, None),
        ("add-raters '=x'", {}, ["server", "add-raters", "=x", "--data-dir", "{d}/ls"], True, None),
        ("score --field ''", {}, ["score", "--study", world["released"], "--field", ""], True, None),
        ("report --release ' '", {}, ["report", "--study", world["released"], "--release", " ", "--format", "markdown"],
         True, None),
        ("agree --raters ''", {}, ["agree", "--study", world["study"], "--raters", ""], True, None),
        ("server status --data-dir with a line break", {}, ["server", "status", "--data-dir", "{d}/ls\nx"], True, None),
        ("server status --data-dir with U+202E", {}, ["server", "status", "--data-dir", "{d}/ls\u202e"], True, None),
        ("a lone 1E5 item id", {"t.csv": "case_id,rater,safety_label\n1E5,onc_a,Supported\n1E5,onc_b,Unsupported\n"},
         ["pull", "--study", "{st}", "--from-table", "{d}/t.csv"], False, kept_as_typed("1E5")),
    ]  # fmt: skip


def _hidden_meaning_cases() -> list[tuple[str, dict[str, str | bytes], list, bool, object]]:
    """Issue 23 (campaign 6 U03/N55/N59/U16): ids and option texts holding a hidden character."""

    def held_hidden(aid, ch):
        def oracle(st, res):
            got = read_ratings_csv(Study.open(st).ratings_path(1))
            inv = read_csv_frame(Study.open(st).invalid_path(1))
            reasons = dict(zip(inv["annotation_id"], inv["reason"]))
            units = (Path(st) / "units.jsonl").read_text(encoding="utf-8")
            if aid in set(got["annotation_id"]) or ch in units or any(ch in i for i in got["item_id"]):
                return f"the id holding U+{ord(ch):04X} was stored"
            code = f"U+{ord(ch):04X}"
            return None if code in reasons.get(aid, "") else f"{aid} not held out naming {code}: {reasons!r:.200}"

        return oracle

    def source_stored(name):
        def oracle(st, res):
            got = list(Study.open(st).round(1).tables)
            return None if got == [name] else f"sources {got!r} in study.toml, expected [{name!r}]"

        return oracle

    pull = ["pull", "--study", "{st}", "--from-table", "{d}/t.csv"]
    cases_head = "case_id,patient_summary,proposed_therapy\nC0,a,b\n"
    out = []
    for ch in ("\u200b", "\u2060", "\u3164", "\ufe0f", "\u2029"):
        code = f"U+{ord(ch):04X}"
        table = f"case_id,rater,safety_label\nC1{ch},onc_a,Supported\nC2,onc_a,Supported\nC2,onc_b,Unsupported\n"
        out += [
            (f"a lone table id holding {code}", {"t.csv": table}, pull, False, held_hidden("t.csv:2", ch)),
            (f"cases validate: a lone case id holding {code}", {"c.csv": cases_head + f"C1{ch},c,d\n"},
             ["cases", "validate", "{d}/c.csv", "--schema", "mtb"], True, None),
            (f"plan sample: a lone case id holding {code}", {"c.csv": cases_head + f"C1{ch},c,d\n"},
             ["plan", "sample", "--cases", "{d}/c.csv", "-n", "1", "-o", "{d}/s.csv"], True, None),
            (f"study round --guideline-version holding {code}", {},
             ["study", "round", "{st}", "1", "--guideline-version", f"v2{ch}"], True, None),
            (f"pull --source holding {code}", {"t.csv": "case_id,rater,safety_label\nC1,onc_a,Supported\n"},
             pull + ["--source", f"t{ch}.csv"], True, None),
        ]  # fmt: skip
    out.append(("pull --source with spaces around it", {"t.csv": "case_id,rater,safety_label\nC1,onc_a,Supported\n"},
                pull + ["--source", "  t.csv "], False, source_stored("t.csv")))  # fmt: skip
    return out


def test_typed_input_is_checked_against_its_meaning(world, failures):
    """Each input whose meaning the command cannot honour (issue 23): a clean error with nothing
    written to the study, or a correct result by the case's oracle."""
    for name, files, argv, must_fail, oracle in _meaning_cases(world) + _hidden_meaning_cases():
        st = _table_study(world["root"], "study")
        d = world["root"] / "meaning" / "in"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        for fname, content in files.items():
            if fname.endswith(".xlsx"):
                wb = openpyxl.Workbook()
                for row in content:
                    wb.active.append(row)
                wb.save(d / fname)
            else:
                (d / fname).write_text(content, encoding="utf-8")
        before = _tree(st)
        res = invoke([str(a).format(st=st, d=d) for a in argv])
        outcome = judge(
            f"meaning: {name}", res, must_fail=must_fail, oracle=oracle and (lambda r, o=oracle, st=st: o(st, r))
        )
        if outcome == "error" and _tree(st) != before:
            FAILURES.append(f"meaning: {name}: refused, but the study's files changed")
        if "ls" in argv[-1] and (d / "ls").exists():
            FAILURES.append(f"meaning: {name}: refused rater name, but the data dir was created")


SELF_OVERWRITE_ARGS = [
    ["report", "--study", "{st}", "-o", "{st}/decisions.jsonl"],
    ["report", "--study", "{st}", "--format", "markdown", "-o", "{st}/gold/v1/gold.csv"],
    ["agree", "--study", "{st}", "-o", "{st}/rounds/1/ratings.csv"],
    ["agree", "{st}/rounds/1/ratings.csv", "-o", "{st}/rounds/1/ratings.csv"],
    ["flag", "--study", "{st}", "-o", "{st}/units.jsonl"],
    ["flag", "{st}/rounds/1/ratings.csv", "--schema", "mtb", "-o", "{st}/study.toml"],
    ["plan", "size", "--kappa", "0.6", "--prevalence", "0.3", "--lower", "0.4", "-o", "{st}/study.toml"],
    ["calibrate", "--study", "{st}", "--rule", "kappa_lower>=0.4", "-o", "{st}/rounds/1/invalid.csv"],
    ["adjudicate", "sheet", "--study", "{st}", "-o", "{st}/rounds/1/sheet.xlsx"],
    ["score", "--study", "{st}", "--predictions", "{predictions}", "-o", "{st}/gold/v1/manifest.json"],
    ["score", "--study", "{st}", "--predictions", "{predictions}", "-o", "{predictions}"],
    ["plan", "sample", "--cases", "{cases}", "-n", "2", "-o", "{tmp}/a.jsonl", "--rest", "{tmp}/a.jsonl"],
    ["plan", "sample", "--cases", "{cases}", "-n", "2", "-o", "{tmp}/a.jsonl", "--outputs", "{outputs}",
     "--outputs-output", "{outputs}"],
    ["cases", "synth", "--schema", "mtb", "-o", "{st}/decisions.jsonl"],
    ["schema", "config", "mtb", "-o", "{st}/units.jsonl"],
]  # fmt: skip


def test_no_command_overwrites_the_study_or_its_own_input(world, failures):
    """Oracle: a clean one-line error, and every file of the study and every input byte-identical."""
    g = world["good"]
    tmp = world["root"] / "selfwrite"
    tmp.mkdir(exist_ok=True)
    inputs = [g["predictions"], g["cases"], g["outputs"]]
    for argv in SELF_OVERWRITE_ARGS:
        st = fresh_copy(world, "selfwrite", "released")
        before, inputs_before = _tree(st), [f.read_bytes() for f in inputs]
        args = [
            a.format(st=st, tmp=tmp, predictions=g["predictions"], cases=g["cases"], outputs=g["outputs"]) for a in argv
        ]
        res = invoke(args)
        name = "self-overwrite: " + " ".join(argv)
        judge(name, res, must_fail=True)
        if _tree(st) != before or [f.read_bytes() for f in inputs] != inputs_before:
            FAILURES.append(f"{name}: a study file or an input changed")
        if list(tmp.iterdir()):
            FAILURES.append(f"{name}: wrote {sorted(p.name for p in tmp.iterdir())}")
            shutil.rmtree(tmp)
            tmp.mkdir()


def test_url_with_password_is_refused_and_never_echoed(world, failures):
    root = world["root"] / "urls"
    shutil.rmtree(root, ignore_errors=True)
    st = root / "st"
    invoke(["study", "init", st, "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", "http://h:8080"])
    for k, url in enumerate(["http://u:pw-SECRET@h", "https://u:pw-SECRET@h:8443/ls", "http://:pw-SECRET@h/"]):
        for argv in (["study", "init", root / f"n{k}", "--schema", "mtb", "--raters", "a,b", "--url", url],
                     ["study", "set", st, "--url", url]):  # fmt: skip
            before = _tree(root)
            res = invoke(argv)
            judge(f"url with password: {argv[1]}", res, must_fail=True)
            if "pw-SECRET" in res.output or _tree(root) != before:
                FAILURES.append(f"url with password: {argv[1]}: the password was printed or stored")


def test_zz_figures():
    """Print the campaign's figures (run with -s to see them)."""
    print(
        "\nfuzz figures: "
        + ", ".join(
            f"{k}: {TALLY[k]}"
            for k in (
                "inputs",
                "clean errors",
                "correct results",
                "tracebacks",
                "silent acceptances",
                "not one line",
                "valid inputs refused",
                "wrong results",
            )
        )
    )
    for test, c in BY_TEST.items():
        print(f"  {test}: {sum(c.values())} inputs, " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    assert TALLY["tracebacks"] == 0 and TALLY["silent acceptances"] == 0 and TALLY["valid inputs refused"] == 0
