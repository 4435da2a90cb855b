"""The bytes a round's intake writes, pinned: ``rounds/N/ratings.csv``, ``invalid.csv`` and the
deterministic part of ``pull.json`` for every source of ratings (issue 20: one intake boundary).

Pinned on the code before the intake was rebuilt around one core, so the rebuilt code must give
byte-identical files for:

* the OpenMTB-Audit table (``cases/example_data/``) wide, long with a rationale, long with values
  that are held out, two tables into one round (one holds out a rating the other gave), the REDCap
  coded export with its data dictionary, several fields from XLSX and JSONL;
* hand-downloaded Label Studio exports (JSON and JSON_MIN; valid, invalid, superseded, cancelled;
  a partial re-pull of one rater's export; a table beside them, then the exports again);
* live Label Studio round trips (``-m live``): a blinded round posted through the API by each
  rater's token with invalid, superseded and intruding annotations; a mixed Label Studio + table
  round; a project goldboard did not create (``--project/--item-key/--rater``).

What varies between runs is normalised before hashing, and only that: ``ratings.csv`` and
``invalid.csv`` are hashed as written (offline) -- for a live server the ids the server allocates
(``task_id``, ``project_id``, ``annotation_id``, ``completed_by``) are replaced by their rank among
that column's ids (ids are allocated in order, so the rank is what the run fixes) and
``annotated_at`` (the server's clock) by ``T``; every other cell is hashed byte for byte.
``pull.json`` is hashed without ``pulled_at`` (the clock), ``source`` (the server URL and port),
``projects`` and ``blinding`` (server ids and tokens' checks), with the temporary folder replaced by
``TMP``, the checkout's folder (where the example data and ``tests/data`` are) by ``REPO``, its warnings sorted (the code before issue 20 listed some in set order, which the hash
seed decides), the SHA-256 of an XLSX table written by the test (its zip entries hold the time it was
written) by ``XLSX`` and, for a live server, ``project N``/``user N`` in warnings by their rank.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import invoke_cli

import goldboard
from goldboard.cases.examples import example_path
from goldboard.study import Study

OPENMTB = example_path("openmtb")
# wherever the checkout is (CI clones elsewhere): the package's folder and the tests' own
REPO = sorted({str(Path(goldboard.__file__).parent), str(Path(__file__).resolve().parent.parent)}, key=len)[::-1]
DATA = Path(__file__).parent / "data" / "ratings"
WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
WIDE += ["--field", "safety_label"]
LIVE_IDS = ("task_id", "project_id", "annotation_id", "completed_by")
VOLATILE = ("pulled_at", "source", "projects", "blinding")


def run(*args, code=0):
    res = invoke_cli(*[str(a) for a in args])
    assert "Traceback" not in res.output, res.output
    assert res.exit_code == code, res.output
    return res


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _ranked_csv(path: Path) -> bytes:
    """The CSV with the server's ids ranked and its clock blanked (see the module docstring)."""
    text = path.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    head, body = rows[0], rows[1:]
    for col in LIVE_IDS:
        if col not in head:
            continue
        j = head.index(col)
        ids = sorted({r[j] for r in body if r[j]}, key=lambda x: (len(x), x))
        rank = {v: str(k + 1) for k, v in enumerate(ids)}
        for r in body:
            r[j] = rank.get(r[j], r[j])
    if "annotated_at" in head:
        j = head.index("annotated_at")
        for r in body:
            r[j] = "T" if r[j] else ""
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows([head, *body])
    return out.getvalue().encode("utf-8")


def _summary(path: Path, tmp: Path, live: bool) -> bytes:
    s = json.loads(path.read_text(encoding="utf-8"))
    # issue 23: the SHA-256 of the ratings.csv the pull wrote (that file's bytes are pinned on their own)
    written = s.pop("ratings_sha256", None)
    assert written in (None, hashlib.sha256((path.parent / "ratings.csv").read_bytes()).hexdigest())
    for k in VOLATILE:
        s.pop(k, None)
    # the code before issue 20 listed "server user unknown" warnings in set order (the hash seed)
    s["warnings"] = sorted(s.get("warnings", []))
    if str(s.get("table", {}).get("file", "")).endswith(".xlsx"):
        s["table"]["sha256"] = "XLSX"  # a workbook written now holds now (its zip entries' times)
    text = json.dumps(s, indent=1, ensure_ascii=False, sort_keys=True).replace(str(tmp), "TMP")
    for root in REPO:  # the example data and tests/data live in the checkout
        text = text.replace(root, "REPO")
    if live:
        for word in ("project", "user"):
            nums = sorted({int(x) for x in re.findall(rf"\b{word} (\d+)", text)})
            rank = {str(v): str(k + 1) for k, v in enumerate(nums)}
            text = re.sub(rf"\b{word} (\d+)", lambda m, w=word, r=rank: f"{w} {r[m.group(1)]}", text)
    return text.encode("utf-8")


def digests(study: Path, tmp: Path, n: int = 1, *, live: bool = False) -> dict[str, str]:
    rnd = study / "rounds" / str(n)
    read = _ranked_csv if live else (lambda p: p.read_bytes())
    return {
        "ratings": _sha(read(rnd / "ratings.csv")),
        "invalid": _sha(read(rnd / "invalid.csv")),
        "pull": _sha(_summary(rnd / "pull.json", tmp, live)),
    }


def check(got: dict[str, dict[str, str]], want: dict[str, dict[str, str]]) -> None:
    assert got == want, "intake bytes changed:\n" + json.dumps(got, indent=1)


def init(tmp: Path, name: str, schema: str = "mtb_unsafe", raters: str = "onc_a,onc_b") -> Path:
    s = tmp / name
    run("study", "init", s, "--schema", schema, "--raters", raters)
    return s


# --------------------------------------------------------------------------- tables, offline


def _table_pulls(tmp: Path) -> dict[str, dict[str, str]]:
    got: dict[str, dict[str, str]] = {}
    # OpenMTB-Audit, wide (one column per oncologist)
    s = init(tmp, "wide")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    got["wide"] = digests(s, tmp)

    # the same ratings long, with a rationale, one alias spelled in the file's own way
    raw = pd.read_csv(OPENMTB, dtype=str, keep_default_na=False)
    rows = []
    for i, r in raw.iterrows():
        for rater, col in (("onc_a", "oncologist_a_label"), ("onc_b", "oncologist_b_label")):
            why = "" if i % 7 == 0 else f"{rater} on {r['case_id']}: «ECOG» =1+1, line1\nline2" if i % 3 else "ok"
            rows.append({"case_id": r["case_id"], "reviewer": rater, "label": r[col], "why": why})
    long = tmp / "openmtb_long.csv"
    pd.DataFrame(rows).to_csv(long, index=False)
    s = init(tmp, "long")
    args = ["--item-col", "case_id", "--rater-col", "reviewer", "--label-col", "label", "--field", "safety_label"]
    run("pull", "--study", s, "--from-table", long, *args, "--rationale-col", "why")
    got["long_rationale"] = digests(s, tmp)

    # values held out verbatim
    s = init(tmp, "invalid")
    t = tmp / "ratings.csv"
    t.write_text(
        "case_id,rater,safety_label,rationale\n"
        "C-1,onc_a,Supportd,typo\n"
        "C-1,onc_b,supported ,case and spaces are fine\n"
        'C-2,onc_a,=HYPERLINK("x"),formula\n'
        "C-2,onc_b,,\n"
        "C-3,onc_a,Unsafe,\n"
        "C-4,onc_a,Unsafe,a blank rationale is no rationale\n",
        encoding="utf-8",
    )
    run("pull", "--study", s, "--from-table", t, "--item-col", "case_id")
    got["held_out"] = digests(s, tmp)

    # two tables into one round; the first then carries a rating the second gave: held out
    s = init(tmp, "two")
    a, b = tmp / "onc_a.csv", tmp / "onc_b.csv"
    for path, rater, col in ((a, "onc_a", "oncologist_a_label"), (b, "onc_b", "oncologist_b_label")):
        raw[["case_id", col]].assign(rater=rater).rename(columns={col: "safety_label"}).to_csv(path, index=False)
    run("pull", "--study", s, "--from-table", a, "--item-col", "case_id")
    run("pull", "--study", s, "--from-table", b, "--item-col", "case_id")
    got["two_tables"] = digests(s, tmp)
    extra = pd.concat(
        [pd.read_csv(a), pd.DataFrame([{"case_id": "MTB-94338760", "safety_label": "Unsafe", "rater": "onc_b"}])]
    )
    extra.loc[3, "safety_label"] = "Unsafe"  # a changed rating
    extra.to_csv(a, index=False)
    run("pull", "--study", s, "--from-table", a, "--item-col", "case_id")
    got["two_tables_repull"] = digests(s, tmp)

    # REDCap raw export with its data dictionary (coded choices, coded reviewer, checkboxes)
    s = init(tmp, "redcap", schema="mtb")
    run(
        "pull",
        "--study",
        s,
        "--from-table",
        DATA / "redcap_export_raw.csv",
        "--item-col",
        "case_id",
        "--rater-col",
        "reviewer",
        "--codes",
        DATA / "redcap_data_dictionary.csv",
    )
    got["redcap"] = digests(s, tmp)

    # several fields by name, XLSX, then JSONL with list-valued multi-selects into round 2
    s = init(tmp, "multi", schema="mtb")
    recs = [
        {"case": "C-1", "who": "onc_a", "safety_label": "Insufficient Info", "missing_info": "stage; ecog_status"},
        {"case": "C-1", "who": "onc_b", "safety_label": "Supported", "missing_info": ""},
        {"case": "C-2", "who": "onc_a", "safety_label": "Partially Supported", "missing_info": "nonsense"},
        {"case": "C-2", "who": "onc_b", "safety_label": "Unsupported", "missing_info": "stage"},
    ]
    for i, r in enumerate(recs):
        r["why"] = f"reason {i}"
    x = tmp / "ratings.xlsx"
    pd.DataFrame(recs).to_excel(x, index=False)
    run("pull", "--study", s, "--from-table", x, "--item-col", "case", "--rater-col", "who", "--rationale-col", "why")
    got["xlsx"] = digests(s, tmp)
    j = tmp / "ratings.jsonl"
    j.write_text("\n".join(json.dumps({**r, "missing_info": ["stage"] if r["who"] == "onc_a" else []}) for r in recs))
    run("pull", "--study", s, "--from-table", j, "--item-col", "case", "--rater-col", "who", "--round", "2")
    got["jsonl"] = digests(s, tmp, 2)
    return got


TABLE_DIGESTS: dict[str, dict[str, str]] = {
    "wide": {"ratings": "39aed7fad8e47d9f", "invalid": "17b9059b15657de9", "pull": "07a0594f26894b46"},
    "long_rationale": {"ratings": "d521f4b710e4013d", "invalid": "17b9059b15657de9", "pull": "cb388771247b9d5a"},
    "held_out": {"ratings": "3088ceba9c12340c", "invalid": "376902a121946a64", "pull": "fe18fb345ec4ce4b"},
    "two_tables": {"ratings": "312007ac9d1b2cf9", "invalid": "17b9059b15657de9", "pull": "a75333ac7affaa01"},
    "two_tables_repull": {"ratings": "c53fd6778a076867", "invalid": "a646010b107f29bb", "pull": "bfd5d4e6f28d94c8"},
    "redcap": {"ratings": "54d2d4f97337f41f", "invalid": "17b9059b15657de9", "pull": "e0080455f9f5656a"},
    "xlsx": {"ratings": "15c9e5861a8b16ce", "invalid": "068a58097b6f7cdf", "pull": "788c3b8f14cfcd31"},
    "jsonl": {"ratings": "6b14416820a4a7f7", "invalid": "17b9059b15657de9", "pull": "79e5299d6a517c97"},
}


def test_table_pulls_are_byte_identical(tmp_path):
    check(_table_pulls(tmp_path), TABLE_DIGESTS)


# --------------------------------------------------------------------------- Label Studio exports, offline


def ch(name, *values, to="output"):
    return {"from_name": name, "to_name": to, "type": "choices", "value": {"choices": list(values)}}


def tx(name, text, to="output"):
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [text]}}


def ann(aid, uid, result, at="2026-01-01T10:00:00Z", cancelled=False, lead=None):
    return {
        "id": aid,
        "completed_by": uid,
        "result": result,
        "was_cancelled": cancelled,
        "created_at": at,
        "updated_at": at,
        "lead_time": lead,
    }


def task(tid, item, anns, project=None):
    data = {"item_id": item, "case_id": item.split("::")[0], "output_id": item, "model": "m", "case_text": "c"}
    return {"id": tid, "data": data, "annotations": anns, **({"project": project} if project is not None else {})}


def json_min(tasks):
    rows = []
    for t in tasks:
        for a in t["annotations"]:
            row = {"id": t["id"], **t["data"], "annotator": a["completed_by"], "annotation_id": a["id"]}
            row.update(created_at=a["created_at"], updated_at=a["updated_at"], lead_time=a["lead_time"])
            for item in a["result"]:
                v = item["value"]
                row[item["from_name"]] = v["text"][0] if "text" in v else v["choices"]
            rows.append(row)
    return rows


def _export_pulls(tmp: Path) -> dict[str, dict[str, str]]:
    got: dict[str, dict[str, str]] = {}
    st = Study.init(tmp / "exp", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    rnd = st.get_or_add_round(1)
    rnd.projects = {"onc_a": 11, "onc_b": 12}
    st.save()
    good = [ch("safety_label", "Supported"), ch("missing_info"), tx("rationale", "fine, «ok»\nline 2")]
    a = [
        task(1, "C1::m", [ann(10, 2, good, lead=12.5)], project=11),
        task(2, "C2::m", [ann(11, 2, [ch("safety_label", "Zzz")])], project=11),
        task(
            3,
            "C3::m",
            [
                ann(12, 2, [ch("safety_label", "Insufficient Info"), ch("missing_info", "stage", "ecog_status")]),
                ann(13, 2, [ch("safety_label", "Unsupported"), tx("rationale", "later")], at="2026-01-02T10:00:00Z"),
            ],
            project=11,
        ),
        task(4, "C4::m", [ann(14, 2, good, cancelled=True)], project=11),
        task(5, "C5::m", [ann(15, 9, good)], project=11),
        task(6, "C6::m", [], project=11),
        task(7, "C7::m", [ann(16, 2, [ch("safety_label", "Supported"), ch("mood", "happy")])], project=11),
    ]
    b = json_min(
        [
            task(21, "C1::m", [ann(20, 3, [ch("safety_label", "Unsupported"), tx("rationale", "no")])]),
            task(22, "C3::m", [ann(22, 3, [ch("safety_label", "Partially Supported"), ch("missing_info", "stage")])]),
        ]
    )
    (tmp / "a.json").write_text(json.dumps(a))
    (tmp / "b.json").write_text(json.dumps(b))
    run("pull", "--study", st.path, "--from-export", tmp / "a.json", "--from-export", f"onc_b={tmp / 'b.json'}")
    got["export"] = digests(st.path, tmp)
    # onc_a changes their mind; only onc_a's export again: onc_b's rows stay
    a2 = [task(1, "C1::m", [ann(10, 2, [ch("safety_label", "Unsupported"), tx("rationale", "rethought")])], project=11)]
    (tmp / "a2.json").write_text(json.dumps(a2))
    run("pull", "--study", st.path, "--from-export", f"onc_a={tmp / 'a2.json'}")
    got["export_partial"] = digests(st.path, tmp)
    return got


# "export" pull.json re-pinned by cl22: C2::m (only an invalid annotation) is no longer also "unannotated"
EXPORT_DIGESTS: dict[str, dict[str, str]] = {
    "export": {"ratings": "6a60b1e35ab2341c", "invalid": "c06671dcb89fac6d", "pull": "574805a70f99faaa"},
    "export_partial": {"ratings": "1fd0b2737b5e2bd0", "invalid": "084356c23f295a70", "pull": "ba2f3bf3638397e6"},
}


def test_export_file_pulls_are_byte_identical(tmp_path):
    check(_export_pulls(tmp_path), EXPORT_DIGESTS)


# --------------------------------------------------------------------------- live Label Studio


SU = ("Supported", "Unsafe")  # onc_b's Label Studio rating of item 0 is invalid: the table gives it
# "blinded" and "mixed_again" pull.json re-pinned by cl22: items whose annotations were all held out as
# invalid are no longer also "unannotated"
LIVE_DIGESTS: dict[str, dict[str, str]] = {
    "blinded": {"ratings": "7f9525f91b2490eb", "invalid": "d22b31a6edcc116c", "pull": "c6fa76c4633de6ec"},
    "mixed_table": {"ratings": "de4eac0d2baed359", "invalid": "db58b432d9200264", "pull": "0d0fc9f51da6e105"},
    # re-pinned when a Label Studio re-pull stopped dropping the table's held-out rows: the unchanged
    # re-pull now writes the same invalid.csv as the table pull before it (was d22b31a6edcc116c, the
    # Label Studio rows alone)
    "mixed_again": {"ratings": "de4eac0d2baed359", "invalid": "db58b432d9200264", "pull": "6da48e6f0f2ef76a"},
}


@pytest.mark.live
def test_live_round_trips_are_byte_identical(live_server, tmp_path):
    from goldboard.annotate import server as srv
    from goldboard.annotate.client import connect
    from goldboard.annotate.simulate import annotation_result, post_ratings
    from goldboard.cases.load import load_units
    from goldboard.cases.synth import synthesize, write_records

    got: dict[str, dict[str, str]] = {}
    cases, outputs = synthesize("mtb", 6, seed=3)
    c, o = tmp_path / "c.jsonl", tmp_path / "o.jsonl"
    write_records(cases, c)
    write_records(outputs, o)
    units = load_units(c, o, schema="mtb")
    items = list(units["item_id"])
    s = tmp_path / "blinded"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], data_dir=str(live_server.data_dir))
    run("push", "--study", s, c, "--outputs", o, "--quiet")
    st = Study.open(s)
    labels = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
    want = []
    for i, item in enumerate(items[2:]):
        for j, r in enumerate(["onc_a", "onc_b"]):
            lab = labels[(i + j * (i % 2)) % 4]
            mi = "stage|ecog_status" if lab in ("Insufficient Information", "Partially Supported") and j else ""
            why = f"{r} on {item}: «ECOG» =1+1, line1\nline2" if i % 3 == 0 else f"{r} #{i}"
            for fname, v in (("safety_label", lab), ("missing_info", mi)):
                want.append({"item_id": item, "rater": r, "field": fname, "value": v, "rationale": why})
    for w in want:
        w["lead_time"] = 10.25
    post_ratings(st, pd.DataFrame(want), progress=False, workers=1)  # one at a time: ids in this order
    client = connect(st)
    creds = srv.read_credentials(live_server.data_dir)
    a, b = client.as_token(creds.token_for("onc_a")), client.as_token(creds.token_for("onc_b"))
    rnd = st.round(1)
    ta = {str(d["item_id"]): tid for tid, d in client.task_data(rnd.projects["onc_a"])}
    tb = {str(d["item_id"]): tid for tid, d in client.task_data(rnd.projects["onc_b"])}
    bad = [ch("safety_label", "Probably fine"), tx("rationale", "hm")]
    a.create_annotation(ta[items[0]], bad)
    b.create_annotation(tb[items[0]], annotation_result(st.schema, {"safety_label": "Supported", "mood": "x"}, "ok"))
    a.create_annotation(ta[items[1]], [])
    b.create_annotation(tb[items[1]], annotation_result(st.schema, {"safety_label": "Supported"}, "v1"))
    b.create_annotation(tb[items[1]], annotation_result(st.schema, {"safety_label": "Unsupported"}, "v2"))
    client.as_token(creds.org_token("onc_a")).create_annotation(ta[items[2]], bad)
    run("pull", "--study", s, "--quiet")
    got["blinded"] = digests(s, tmp_path, live=True)

    # the mixed round: onc_b's ratings of two items also arrive as a table (held out: already rated),
    # then Label Studio again keeps the table's rows
    t = tmp_path / "onc_b.csv"
    rows = [{"item_id": it, "rater": "onc_b", "safety_label": v, "rationale": "sheet"} for it, v in zip(items, SU)]
    rows.append({"item_id": items[3], "rater": "onc_b", "safety_label": "Supported", "rationale": "sheet"})
    rows.append({"item_id": "NOT-PUSHED", "rater": "onc_b", "safety_label": "Supported", "rationale": "sheet"})
    pd.DataFrame(rows).to_csv(t, index=False)
    run("pull", "--study", s, "--from-table", t)
    got["mixed_table"] = digests(s, tmp_path, live=True)
    run("pull", "--study", s, "--quiet")
    got["mixed_again"] = digests(s, tmp_path, live=True)
    client.close()
    check(got, LIVE_DIGESTS)


FOREIGN_DIGESTS: dict[str, dict[str, str]] = {
    "foreign": {"ratings": "7e786c1010972e2e", "invalid": "2db93494f4cb2a12", "pull": "decd03ff17e7c9db"},
    "foreign_export": {"ratings": "7e786c1010972e2e", "invalid": "e3ac96be22b2d08d", "pull": "93496bdfe6af0201"},
}


@pytest.mark.live
def test_live_foreign_project_is_byte_identical(convention_server, tmp_path):
    """A project goldboard did not create (test_pull_handmade's): ``--project/--item-key/--rater``,
    and the same project's export offline."""
    from test_pull_handmade import CASES, CONFIG, LABELS, result

    from goldboard.annotate import server as srv
    from goldboard.annotate.client import connect

    s = tmp_path / "hand"
    Study.init(s, schema="mtb", raters=["dr_a", "dr_b"], data_dir=str(convention_server.data_dir))
    st = Study.open(s)
    creds = srv.read_credentials(convention_server.data_dir)
    admin = connect(st)
    pid = admin.create_project("hand-made MTB review", CONFIG, maximum_annotations=2)
    admin.import_tasks(
        pid, [{"data": {"case_id": c, "patient_summary": p, "proposed_therapy": t}} for c, p, t in CASES]
    )
    tasks = {d["case_id"]: tid for tid, d in admin.task_data(pid)}
    for j, user in enumerate(["onc_a", "onc_b"]):
        me = admin.as_token(creds.users[user].token, f"{user}'s token")
        for case, labels in LABELS.items():
            me.create_annotation(tasks[case], result(labels[j], f"{user} on {case}"), lead_time=12.5)
        me.close()
    admin.create_annotation(tasks["H-1"], result("Unsupported", "admin tried it"))
    email_b = creds.users["onc_b"].email
    run("pull", "--study", s, "--project", pid, "--item-key", "case_id", "--rater", f"onc_a=dr_a,{email_b}=dr_b")
    got = {"foreign": digests(s, tmp_path, live=True)}
    export = tmp_path / "export.json"
    export.write_text(json.dumps(admin.export(pid)))
    admin.close()
    s2 = tmp_path / "offline"
    Study.init(s2, schema="mtb", raters=["dr_a", "dr_b"], url="http://127.0.0.1:9")
    ida, idb = creds.users["onc_a"].id, creds.users["onc_b"].id
    run("pull", "--study", s2, "--from-export", export, "--item-key", "case_id", "--rater", f"{ida}=dr_a,{idb}=dr_b")
    got["foreign_export"] = digests(s2, tmp_path, live=True)
    check(got, FOREIGN_DIGESTS)
