"""The study's records certify only what they describe (issue 23).

- a gold release's manifest hashes exactly the bytes gold was built from (a pull or an
  import landing during `gold export` cannot put its file's digest in the manifest);
- every reader of a release (`gold diff`, `report`, `score`, `gold list`) verifies it
  against its manifest and refuses a changed release;
- a review sheet without a verifiable origin is refused unless --unverified-sheet, which
  the log records; a second import of one sheet id (two filled copies of one workbook) is
  a conflict; a Decision column sorted on its own is detected by the per-row check (a
  decision never lands on a row it was not written on); a leading space or tab in a
  Reason is kept;
- data is shown as the text it is in the Markdown and HTML reports (link and emphasis
  syntax, bidi controls);
- permissions follow one policy: study files (gold releases too) by the umask, the
  server data dir (tokens, Label Studio's database) owner-only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from copy import copy
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from goldboard.adjudicate.decisions import Proposed, read_decisions, record_decisions
from goldboard.adjudicate.review_sheet import cell_check_color, moved_decision_rows, row_check_color
from goldboard.errors import GoldboardError
from goldboard.exports.gold import ChangedRelease, read_release, release_path
from goldboard.fileio import umask
from goldboard.text import md_escape, visible_controls

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_adjudication_roundtrip import fill, make_study, rows_by_item, run  # noqa: E402
from test_flags import I, P, S, U  # noqa: E402

SL = "safety_label"


@pytest.fixture()
def study(tmp_path):
    return make_study(tmp_path)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sheet_for(study, tmp_path, name="review.xlsx") -> Path:
    p = tmp_path / name
    res = run("adjudicate", "sheet", "--study", study.path, "-o", p)
    assert res.exit_code == 0, res.output
    return p


def import_(study, sheet, *extra):
    return run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee", *extra)


# --------------------------------------------------------------------------- 1. manifest = bytes read


def test_manifest_hashes_the_bytes_gold_was_built_from_when_a_pull_lands_meanwhile(study, tmp_path, monkeypatch):
    """A deterministic interleaving of the race `gold export` vs `pull`: the ratings file and
    the decisions log are replaced after gold read them and before it hashed them."""
    from goldboard.workflows import adjudication as wf

    assert import_(study, fill_sheet(study, tmp_path, {"C-1": (P, "ECOG 2", None)})).exit_code == 0
    ratings, log = study.ratings_path(1), study.decisions_path
    old_ratings, old_log = ratings.read_bytes(), log.read_bytes()
    real = wf.resolve_gold

    def pull_lands_now(*args, **kwargs):
        # what a pull (and another import) write meanwhile: whole files renamed into place
        df = pd.read_csv(ratings, dtype=str, keep_default_na=False)
        df.loc[(df.item_id == "C-3") & (df.rater == "onc_b") & (df.field == SL), "value"] = U
        tmp = ratings.with_suffix(".new")
        tmp.write_text(df.to_csv(index=False), encoding="utf-8")
        os.replace(tmp, ratings)
        os.replace(_log_with_one_more(log, tmp_path), log)
        return real(*args, **kwargs)

    monkeypatch.setattr(wf, "resolve_gold", pull_lands_now)
    rel = wf.export_gold(study)
    assert ratings.read_bytes() != old_ratings and log.read_bytes() != old_log  # the race happened
    src = rel.manifest["sources"]
    assert src["ratings"][0]["sha256"] == sha(old_ratings)  # old code: the new file's digest
    assert src["decisions"]["sha256"] == sha(old_log)
    assert src["decisions"]["entries"] == 1
    gold = rel.gold.set_index(["item_id", "field"])
    assert gold.loc[("C-3", SL), "value_onc_b"] != U  # built from the bytes the manifest names


def _log_with_one_more(log: Path, tmp_path: Path) -> Path:
    out = tmp_path / "log.new"
    shutil.copy(log, out)
    record_decisions(out, [Proposed("C-2", SL, S, "later", "dr_x")], source="sheet")
    return out


def fill_sheet(study, tmp_path, rows: dict, name="review.xlsx") -> Path:
    p = sheet_for(study, tmp_path, name)
    fill(p, rows)
    return p


# --------------------------------------------------------------------------- 2. readers verify releases


def _two_releases(study, tmp_path):
    assert run("gold", "export", "--study", study.path).exit_code == 0
    assert import_(study, fill_sheet(study, tmp_path, {"C-1": (P, "ECOG 2", None)})).exit_code == 0
    assert run("gold", "export", "--study", study.path).exit_code == 0
    return release_path(study.gold_dir, "v1"), release_path(study.gold_dir, "v2")


def _edit(path: Path, old: str, new: str) -> None:
    os.chmod(path, 0o644)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_changed_release_is_refused_by_every_reader(study, tmp_path):
    v1, v2 = _two_releases(study, tmp_path)
    # an edited gold.csv (a value turned "unanimous" by hand) in v1
    _edit(v1 / "gold.csv", ",unanimous,", ",adjudicated,")
    res = run("gold", "diff", "v1", "v2", "--study", study.path)
    assert res.exit_code == 1 and res.output.count("\n") == 1, res.output
    assert f"{v1 / 'gold.csv'}: changed since release v1 was written" in res.output
    assert "unanimous" not in res.output.split("was written")[1][:5]
    res = run("gold", "list", "--study", study.path)
    assert res.exit_code == 0 and f"Warning: {v1 / 'gold.csv'}: changed since release v1" in res.output
    assert "gold.csv: changed" not in res.output.split("v2 ")[1]  # v2 verifies
    # the latest release edited: report and score refuse it
    _edit(v2 / "gold.csv", "Partially Supported", "Supported")
    for args in (("report", "--study", study.path, "-o", tmp_path / "r.html"), ("score", "--study", study.path)):
        res = run(*args)
        assert res.exit_code != 0 and "changed since release v2 was written" in res.output, (args, res.output)
    assert not (tmp_path / "r.html").exists()


def test_a_release_whose_manifest_digest_was_also_edited_is_refused(study, tmp_path):
    """Editing gold.csv and its file SHA-256 in the manifest still fails: the content digest differs."""
    v1, _ = _two_releases(study, tmp_path)
    _edit(v1 / "gold.csv", ",unanimous,", ",adjudicated,")
    man = json.loads((v1 / "manifest.json").read_text(encoding="utf-8"))
    man["files"]["gold.csv"]["sha256"] = sha((v1 / "gold.csv").read_bytes())
    os.chmod(v1 / "manifest.json", 0o644)
    (v1 / "manifest.json").write_text(json.dumps(man), encoding="utf-8")
    with pytest.raises(ChangedRelease, match=r"its gold table is not the one release v1 recorded"):
        read_release(v1)
    del man["files"]
    (v1 / "manifest.json").write_text(json.dumps(man), encoding="utf-8")
    with pytest.raises(ChangedRelease, match=r"records no SHA-256 for gold.csv: release v1 cannot be verified"):
        read_release(v1)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json", "xlsx"])
def test_an_untouched_release_verifies_in_every_format(study, tmp_path, fmt):
    assert run("gold", "export", "--study", study.path, "--format", fmt).exit_code == 0
    gold, man = read_release(release_path(study.gold_dir, "v1"))
    assert len(gold) == man["rows"]


# --------------------------------------------------------------------------- 3. review sheets


def _strip_state(sheet: Path) -> None:
    wb = openpyxl.load_workbook(sheet)
    for row in list(wb["_goldboard"].iter_rows()):
        if row[0].value in ("sheet_id", "ratings_sha256"):
            row[0].value = row[1].value = None
    wb.save(sheet)


def test_a_sheet_without_verifiable_origin_is_refused_unless_the_flag_which_the_log_records(study, tmp_path):
    sheet = fill_sheet(study, tmp_path, {"C-1": (P, "ECOG 2", None)})
    _strip_state(sheet)
    res = import_(study, sheet)
    assert res.exit_code == 1 and res.output.count("\n") == 1, res.output
    assert res.output.startswith("Error: review.xlsx: no verifiable origin (its _goldboard sheet lacks sheet_id")
    assert "--unverified-sheet" in res.output and not study.decisions_path.exists()
    res = import_(study, sheet, "--unverified-sheet")
    assert res.exit_code == 0 and "1 new decisions" in res.output, res.output
    assert [e.get("unverified_origin") for e in read_decisions(study.decisions_path)] == [True]
    # a sheet with no _goldboard sheet at all: the same refusal
    bare = fill_sheet(study, tmp_path, {"C-7": (I, "no stage", None)}, "bare.xlsx")
    wb = openpyxl.load_workbook(bare)
    del wb["_goldboard"]
    wb.save(bare)
    res = import_(study, bare)
    assert res.exit_code == 1 and "no verifiable origin (it has no _goldboard sheet" in res.output


def test_two_filled_copies_of_one_workbook_conflict_instead_of_replacing(study, tmp_path):
    first = sheet_for(study, tmp_path, "a.xlsx")
    second = tmp_path / "b.xlsx"
    shutil.copy(first, second)
    fill(first, {"C-1": (P, "ECOG 2", "dr_kim"), "C-7": (I, "no stage", "dr_kim")})
    fill(second, {"C-1": (U, "no trial data", "dr_lee"), "C-7": (I, "no stage", "dr_kim"), "C-10": (S, "", None)})
    assert import_(study, first).exit_code == 0
    before = study.decisions_path.read_bytes()
    res = import_(study, second)
    assert res.exit_code == 1, res.output
    ws = openpyxl.load_workbook(second)["Disagreements"]
    c1 = rows_by_item(ws)[1]["C-1"]["Decision"].coordinate
    assert (
        f'Disagreements!{c1}: item "C-1", safety_label: the sheet\'s "{U}" would replace what an earlier import of '
        f'this same sheet id (another copy of this workbook?) recorded: the newer decision "{P}" (D000001 by dr_kim'
    ) in res.output
    assert "b.xlsx: 1 row would replace decisions made after this sheet was written; nothing imported" in res.output
    assert study.decisions_path.read_bytes() == before  # C-10 (new) not imported either: all or nothing
    res = import_(study, second, "--overrule-newer")
    assert res.exit_code == 0 and f'"C-1" safety_label: "{P}" -> "{U}" (by dr_lee; overrules newer D000001)' in (
        res.output
    )


def excel_sort_column(path: Path, header: str, *, descending: bool = False) -> None:
    """What Excel does on Sort A to Z with "continue with the current selection" on one
    column: the column's cells (values and formatting) are reordered, blanks last; every
    other column stays."""
    wb = openpyxl.load_workbook(path)
    ws = wb["Disagreements"]
    col = [c.value for c in ws[1]].index(header) + 1
    cells = [ws.cell(row=r, column=col) for r in range(2, ws.max_row + 1)]
    moved = [(c.value, copy(c._style)) for c in cells]
    filled = sorted((m for m in moved if m[0] not in (None, "")), key=lambda m: str(m[0]), reverse=descending)
    order = filled + [m for m in moved if m[0] in (None, "")]
    for c, (v, style) in zip(cells, order):
        c.value, c._style = v, style
    wb.save(path)


def test_a_decision_column_sorted_on_its_own_is_refused(study, tmp_path):
    sheet = fill_sheet(
        study, tmp_path, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None), "C-10": (S, "", None)}
    )
    excel_sort_column(sheet, "Decision")
    res = import_(study, sheet)
    assert res.exit_code == 1, res.output
    assert "the Decision column was sorted or moved on its own" in res.output
    assert "nothing imported" in res.output and not study.decisions_path.exists()
    # every displaced decision is named by cell: the sort put I (from C-7's row) on row 2 and S (from
    # row 2) on row 3; U sorted back onto its own row 4, which is no error
    moved = [line for line in res.output.splitlines() if "was written on another row" in line]
    assert [m.split(":")[0] for m in moved] == ["Disagreements!F2", "Disagreements!F3"], res.output
    assert f'Disagreements!F2: decision "{I}" was written on another row (row ' in moved[0]
    assert (
        'Disagreements!F3: decision "Supported" was written on another row (row 2), not on this row\'s item "C-11"'
        in (moved[1])
    )


def test_a_decision_copied_to_another_row_is_not_a_sort(study, tmp_path):
    sheet = fill_sheet(study, tmp_path, {"C-10": (S, "label read", None)})
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    rows = rows_by_item(ws)[1]
    src, dst = rows["C-10"]["Decision"], rows["C-11"]["Decision"]
    dst.value, dst._style = src.value, copy(src._style)  # Ctrl+C / Ctrl+V: value and format
    rows["C-11"]["Reason"].value = "same as C-10"
    wb.save(sheet)
    res = import_(study, sheet)
    assert res.exit_code == 0 and "2 new decisions" in res.output, res.output


@pytest.mark.slow  # LibreOffice resaves the workbook (soffice start: seconds)
def test_row_checks_survive_a_libreoffice_resave_and_still_catch_a_sort(study, tmp_path):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        pytest.skip("LibreOffice not installed")
    sheet = fill_sheet(study, tmp_path, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    out = tmp_path / "lo"
    subprocess.run(
        [
            soffice,
            f"-env:UserInstallation=file://{out / 'profile'}",
            "--headless",
            "--calc",
            "--convert-to",
            "xlsx:Calc MS Excel 2007 XML",
            "--outdir",
            str(out),
            str(sheet),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    resaved = out / sheet.name
    ws = openpyxl.load_workbook(resaved)["Disagreements"]
    head, rows = rows_by_item(ws)
    for item, rec in rows.items():
        assert cell_check_color(rec["Decision"]) == row_check_color(rec["Key (do not edit)"].value), item
    sorted_copy = tmp_path / "sorted.xlsx"
    shutil.copy(resaved, sorted_copy)
    excel_sort_column(sorted_copy, "Decision", descending=True)
    assert import_(study, sorted_copy).exit_code == 1
    res = import_(study, resaved)
    assert res.exit_code == 0 and "2 new decisions" in res.output, res.output


def test_moved_rows_rule():
    a, b, c = (row_check_color(k) for k in ("ka", "kb", "kc"))
    assert len({a, b, c}) == 3 and all(x.startswith("FF0") and x[4] == "0" and x[6] == "0" for x in (a, b, c))
    assert moved_decision_rows([(2, a, b), (3, b, a), (4, c, c)]) == {2: [3], 3: [2]}  # a swap
    assert moved_decision_rows([(2, a, a), (3, b, a), (4, c, None)]) == {}  # a copy; a pasted-over format
    assert moved_decision_rows([(2, a, None), (3, b, a)]) == {3: [2]}  # a cut and paste


def test_a_leading_space_or_tab_in_a_reason_is_kept(study, tmp_path):
    sheet = fill_sheet(study, tmp_path, {"C-1": (U, "\tindented note", None), "C-7": (I, "  two spaces", None)})
    assert import_(study, sheet).exit_code == 0
    got = {e["item_id"]: e["reason"] for e in read_decisions(study.decisions_path)}
    assert got == {"C-1": "\tindented note", "C-7": "  two spaces"}
    # a fresh sheet shows them again; importing it changes nothing
    again = sheet_for(study, tmp_path, "again.xlsx")
    res = import_(study, again)
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 2 unchanged" in res.output, res.output


# --------------------------------------------------------------------------- 4. data shown as the text it is


def test_md_escape_neutralises_links_emphasis_and_bidi():
    assert md_escape("[click here](http://evil.example)") == "\\[click here\\](http://evil.example)"
    assert md_escape("![img](http://x/p.png)") == "!\\[img\\](http://x/p.png)"
    assert md_escape("**bold** *it* ~~gone~~ _u_") == "\\*\\*bold\\*\\* \\*it\\* \\~\\~gone\\~\\~ \\_u\\_"
    assert md_escape("onc_a and snake_case_name") == "onc_a and snake_case_name"  # cannot emphasise
    assert md_escape("# heading") == "\\# heading" and md_escape("1. list") == "1\\. list"
    assert md_escape("0.73") == "0.73" and md_escape("-0.5") == "-0.5"
    assert md_escape("a\\b") == "a\\\\b"
    assert md_escape("abc\u202edef\u2066x") == "abc\\\\u202edef\\\\u2066x"
    assert visible_controls("R\u200fL\u061c") == "R\\u200fL\\u061c"


def test_reports_show_markdown_syntax_and_bidi_controls_from_data_as_text(study, tmp_path):
    who = "**dr** [see](http://evil.example) \u202eevil"
    sheet = fill_sheet(study, tmp_path, {"C-1": (U, "no data", who)})
    assert import_(study, sheet).exit_code == 0
    res = run("report", "--study", study.path, "--format", "markdown", "-o", tmp_path / "r.md")
    assert res.exit_code == 0, res.output
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "\\*\\*dr\\*\\* \\[see\\](http://evil.example) \\\\u202eevil" in md
    assert "[see](" not in md and "\u202e" not in md
    res = run("report", "--study", study.path, "-o", tmp_path / "r.html")
    assert res.exit_code == 0, res.output
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "\u202e" not in html and "\\u202eevil" in html
    assert '<a href="http://evil.example' not in html


# --------------------------------------------------------------------------- 6. permissions


def test_gold_release_folders_and_files_follow_the_umask_like_every_study_file(study):
    old = os.umask(0o022)
    try:
        assert run("gold", "export", "--study", study.path).exit_code == 0
        v1 = release_path(study.gold_dir, "v1")
        assert stat.S_IMODE(v1.stat().st_mode) == 0o755  # was 0700 (mkdtemp) while the study is 0755
        assert {stat.S_IMODE(p.stat().st_mode) for p in v1.iterdir()} == {0o444}  # read-only: final
        assert stat.S_IMODE(study.decisions_path.parent.stat().st_mode) == 0o755
        os.umask(0o077)
        assert run("gold", "export", "--study", study.path, "--force").exit_code == 0
        v2 = release_path(study.gold_dir, "v2")
        assert stat.S_IMODE(v2.stat().st_mode) == 0o700
        assert {stat.S_IMODE(p.stat().st_mode) for p in v2.iterdir()} == {0o400}
    finally:
        os.umask(old)
    assert umask() == old


def test_server_data_dir_is_owner_only(tmp_path):
    from goldboard.annotate.server import restrict_data_dir

    d = tmp_path / "server"
    (d / "ls" / "media").mkdir(parents=True)
    db = d / "ls" / "label_studio.sqlite3"
    db.write_text("tokens")
    os.chmod(db, 0o644)
    os.chmod(d, 0o755)
    (d / "link").symlink_to(tmp_path)
    changed = restrict_data_dir(d)
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(d.stat().st_mode) == 0o700 and stat.S_IMODE((d / "ls").stat().st_mode) == 0o700
    assert stat.S_IMODE(tmp_path.stat().st_mode) != 0o700 or (d / "link") not in changed
    assert restrict_data_dir(d) == []  # nothing left to change


def test_errors_name_the_file(study, tmp_path):
    """The refusal is a GoldboardError (one line) from the library too."""
    _two_releases(study, tmp_path)
    v1 = release_path(study.gold_dir, "v1")
    os.chmod(v1 / "gold.csv", 0o644)
    (v1 / "gold.csv").write_bytes(b"")
    with pytest.raises(GoldboardError) as exc:
        read_release(v1)
    assert str(exc.value).startswith(f"{v1 / 'gold.csv'}: changed since release v1") and "\n" not in str(exc.value)


@pytest.mark.slow  # LibreOffice resaves the workbook (soffice start: seconds)
def test_a_decision_column_sorted_on_its_own_by_libreoffice_itself_is_refused(study, tmp_path):
    """The same single-column sort done by LibreOffice (through UNO), not simulated."""
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    uno_python = next(
        (
            p
            for p in ("/usr/bin/python3", shutil.which("python3"))
            if p and subprocess.run([p, "-c", "import uno"], capture_output=True).returncode == 0
        ),
        None,
    )
    if soffice is None or uno_python is None:
        pytest.skip("LibreOffice with python3-uno not installed")
    sheet = fill_sheet(
        study, tmp_path, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None), "C-10": (S, "", None)}
    )
    ws = openpyxl.load_workbook(sheet)["Disagreements"]
    col = [c.value for c in ws[1]].index("Decision")
    out = tmp_path / "sorted-by-libreoffice.xlsx"
    script = Path(__file__).resolve().parent / "lo_sort_column.py"
    args = [uno_python, str(script), str(sheet), str(out), "Disagreements", str(col), "1", str(ws.max_row - 1)]
    subprocess.run([*args, str(tmp_path / "lo-profile")], check=True, capture_output=True, timeout=300)
    res = import_(study, out)
    assert res.exit_code == 1 and "the Decision column was sorted or moved on its own" in res.output, res.output
    assert not study.decisions_path.exists()


# --------------------------------------------------------------------------- fuzz: oracles for the cases above


@pytest.mark.parametrize("seed", range(6))
def test_fuzz_decision_column_permutations(tmp_path, seed):
    """A random reordering of the Decision column's cells (values and formats, as a sort or
    cut-and-paste moves them) and random copies: the import is refused exactly when a decision
    sits on a row it was not written on; otherwise every decision lands on its own row."""
    import random

    rng = random.Random(seed)
    study = make_study(tmp_path)
    sheet = sheet_for(study, tmp_path)
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    dcol, rcol, fcol, icol = (head.index(h) + 1 for h in ("Decision", "Reason", "Field", "Item ID"))
    rows = [r for r in range(2, ws.max_row + 1) if ws.cell(r, fcol).value == SL]
    decided = rng.sample(rows, 4)
    for r in decided:  # Insufficient Information: allowed with any missing_info (mtb rule)
        ws.cell(r, dcol).value, ws.cell(r, rcol).value = I, f"seed {seed} row {r}"
    cells = {r: (ws.cell(r, dcol).value, copy(ws.cell(r, dcol)._style)) for r in rows}
    order = rows[:]
    if seed % 3:  # seeds 1, 2, 4, 5: a reordering (3-cycles or a shuffle); 0, 3: none
        rng.shuffle(order)
    for r, src in zip(rows, order):
        ws.cell(r, dcol).value, ws.cell(r, dcol)._style = cells[src][0], copy(cells[src][1])
    placed = dict(zip(rows, order))  # row -> the row its Decision cell was written on
    in_place = [r for r in rows if placed[r] == r and r in decided]
    if seed % 2 == 0 and in_place:  # a copy of a decision into an empty row (copy and paste keeps the source)
        src = in_place[0]
        dst = next(r for r in rows if ws.cell(r, dcol).value is None)
        ws.cell(dst, dcol).value, ws.cell(dst, dcol)._style = ws.cell(src, dcol).value, copy(ws.cell(src, dcol)._style)
        ws.cell(dst, rcol).value = "copied"
        placed[dst] = dst  # a copy of a decision on its own row counts as written here
    wb.save(sheet)
    moved = [r for r in rows if ws.cell(r, dcol).value and placed[r] != r]
    res = import_(study, sheet)
    if moved:
        assert res.exit_code == 1 and "sorted or moved on its own" in res.output, (seed, moved, res.output)
        named = {
            int("".join(ch for ch in line.split(":")[0].split("!")[1] if ch.isdigit()))
            for line in res.output.splitlines()
            if "was written on another row" in line
        }
        assert named == set(moved), (seed, named, moved)
        assert not study.decisions_path.exists()
    else:
        assert res.exit_code == 0, (seed, res.output)
        got = {e["item_id"] for e in read_decisions(study.decisions_path)}
        want = {ws.cell(r, icol).value for r in rows if ws.cell(r, dcol).value}
        assert got == want, seed


@pytest.mark.parametrize("seed", range(4))
def test_fuzz_release_byte_edits_are_refused_by_every_reader(study, tmp_path, seed):
    """One random byte of a release's gold file changed: every reader refuses it by name."""
    import random

    rng = random.Random(seed)
    assert (
        run("gold", "export", "--study", study.path, "--format", ["csv", "jsonl", "json", "xlsx"][seed]).exit_code == 0
    )
    v1 = release_path(study.gold_dir, "v1")
    f = next(p for p in v1.iterdir() if p.name.startswith("gold."))
    data = bytearray(f.read_bytes())
    i = rng.randrange(len(data))
    data[i] = (data[i] + 1 + rng.randrange(254)) % 256
    os.chmod(f, 0o644)
    f.write_bytes(bytes(data))
    for args in (("score", "--study", study.path), ("report", "--study", study.path, "-o", tmp_path / "r.html")):
        res = run(*args)
        assert res.exit_code != 0 and f"{f}: changed since release v1 was written" in res.output, (seed, args)
