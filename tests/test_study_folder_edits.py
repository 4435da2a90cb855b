"""A study's own files edited by hand or damaged are named by every reader (``status``, ``agree``,
``flag``, ``adjudicate sheet``, ``gold export``, ``report``, ``calibrate``), never read on in
silence or a crash: study.toml entries study init would refuse (a rater listed twice, a BOM), a
schema changed under pulled ratings, missing or damaged pull records, round and release folders
renamed, deleted or looking alike, rated items without their unit.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from builders import OPENMTB, OPENMTB_WIDE, demo_study, error_naming, study_files, write_table
from conftest import error_line
from conftest import invoke_cli as run
from conftest import run_cli as run_ok

from goldboard.study import Study


@pytest.fixture(scope="module")
def pulled(tmp_path_factory) -> Path:
    """A study of two table-pulled rounds: round 1 (10 items, 2 disagreements), round 2 (3 items)."""
    root = tmp_path_factory.mktemp("files")
    s = root / "study"
    assert run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    rows = ["C-1,Supported,Unsupported", "C-2,Supported,Supported", "C-3,Unsupported,Unsafe"]
    rows += [f"C-{n},Supported,Supported" for n in range(4, 11)]
    cols = ["--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b"]
    res = run("pull", "--study", s, "--from-table", write_table(root / "r1.csv", rows), *cols)
    assert res.exit_code == 0, res.output
    again = ["C-1,Supported,Supported", "C-2,Supported,Unsupported", "C-3,Unsupported,Unsupported"]
    res = run("pull", "--study", s, "--from-table", write_table(root / "r2.csv", again), "--round", "2", *cols)
    assert res.exit_code == 0, res.output
    return s


def _copy(pulled: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "s"
    shutil.copytree(pulled, dst)
    return dst


def _readers(s: Path, tmp_path: Path) -> list[tuple]:
    return [
        ("status", "--study", s),
        ("agree", "--study", s),
        ("flag", "--study", s, "--format", "csv", "-o", tmp_path / "f.csv"),
        ("adjudicate", "sheet", "--study", s, "-o", tmp_path / "s.xlsx"),
        ("report", "--study", s, "--format", "markdown", "-o", tmp_path / "r.md", "--no-supplement"),
        ("gold", "export", "--study", s),
        ("calibrate", "--study", s, "--rule", "kappa_lower>=0.6"),
    ]


def _edit_toml(s: Path, old: str, new: str) -> None:
    toml = s / "study.toml"
    text = toml.read_text(encoding="utf-8")
    assert old in text, text
    toml.write_text(text.replace(old, new, 1), encoding="utf-8")


RATERS = '    "onc_a",\n    "onc_b",\n'
HAND_EDITS = {
    "a rater listed twice": (RATERS, RATERS + '    "onc_b",\n', "rater 'onc_b' is listed twice in [study] raters"),
    "one rater": (RATERS, '    "onc_a",\n', "1 rater(s); a study needs at least two"),
    "letter-case twins": (RATERS, RATERS + '    "ONC_B",\n', "'onc_b' and 'ONC_B' in [study] raters differ"),
    "a reserved word": (RATERS, RATERS + '    "gold",\n', "'gold' is a word goldboard writes itself"),
    "not a name": (RATERS, RATERS + '    "onc c",\n', "'onc c': use letters, digits"),
    "one string": ("raters = [\n" + RATERS + "]", 'raters = "onc_a,onc_b"', "raters: not a list of names"),
    "a round twice": ("number = 2\n", "number = 1\n", "[[rounds]] number = 1: listed twice"),
}


@pytest.mark.parametrize("edit", list(HAND_EDITS))
def test_a_study_toml_study_init_would_refuse_is_refused_by_every_reader(pulled, tmp_path, edit):
    s = _copy(pulled, tmp_path)
    old, new, said = HAND_EDITS[edit]
    _edit_toml(s, old, new)
    before = sorted(p.relative_to(s) for p in s.rglob("*"))
    for cmd in _readers(s, tmp_path):
        line = error_line(run(*cmd))
        assert line.startswith(f"Error: {s / 'study.toml'}: ") and said in line, (cmd, line)
    assert sorted(p.relative_to(s) for p in s.rglob("*")) == before  # nothing written
    assert not (tmp_path / "f.csv").exists() and not (tmp_path / "r.md").exists()


def test_the_raters_as_study_init_wrote_them_still_open(pulled):
    assert Study.open(pulled).raters == ["onc_a", "onc_b"]


def test_a_schema_changed_under_pulled_ratings_is_named_with_file_line_and_field(pulled, tmp_path):
    s = _copy(pulled, tmp_path)
    _edit_toml(s, 'schema = "mtb_unsafe"', 'schema = "mtb"')  # 'Unsafe' is not a value of it
    line_no = next(
        i
        for i, row in enumerate((s / "rounds" / "1" / "ratings.csv").read_text().splitlines(), start=1)
        if "Unsafe" in row
    )
    for cmd in _readers(s, tmp_path):
        line = error_line(run(*cmd))
        assert line == (
            f"Error: {s / 'study.toml'}: schema 'mtb' does not match the ratings pulled with it: round 1 was "
            f"pulled with schema mtb_unsafe v1.0 ({s / 'rounds' / '1' / 'pull.json'}), and "
            f"{s / 'rounds' / '1' / 'ratings.csv'}:{line_no}: safety_label: 'Unsafe' is not one of its "
            "values; study.toml edited by hand? put back the schema 'mtb_unsafe'"
        ), (cmd, line)


def test_a_schema_without_the_ratings_field_names_the_field(pulled, tmp_path):
    s = _copy(pulled, tmp_path)
    _edit_toml(s, 'schema = "mtb_unsafe"', 'schema = "radsafe"')
    line = error_line(run("agree", "--study", s))
    assert f"{s / 'rounds' / '1' / 'ratings.csv'}:2: field: 'safety_label' is not one of its fields" in line, line


def test_a_study_toml_saved_with_a_bom_is_read_as_meant(pulled, tmp_path):
    s = _copy(pulled, tmp_path)
    want = run("agree", "--study", pulled, "--format", "json")
    assert want.exit_code == 0, want.output
    toml = s / "study.toml"
    toml.write_bytes(b"\xef\xbb\xbf" + toml.read_bytes())
    got = run("agree", "--study", s, "--format", "json")
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout) == json.loads(want.stdout)
    assert run("status", "--study", s).exit_code == 0


DAMAGE = {
    "deleted": (None, "pull.json: missing, so"),
    "not JSON": (b'{"broken', "pull.json: not valid JSON (line 1), so"),
    "not an object": (b"[1, 2]\n", "pull.json: not a pull record (a JSON object), so"),
    "digest edited": (None, "pull.json: ratings_sha256 'abc' is not a SHA-256, so"),
    "a folder": (None, "pull.json: cannot be read (Is a directory), so"),
}


def _damage(s: Path, how: str) -> Path:
    rec = s / "rounds" / "1" / "pull.json"
    blob = DAMAGE[how][0]
    if how == "digest edited":
        data = json.loads(rec.read_text(encoding="utf-8"))
        rec.write_text(json.dumps({**data, "ratings_sha256": "abc"}), encoding="utf-8")
    elif how == "a folder":
        rec.unlink()
        rec.mkdir()
    elif blob is None:
        rec.unlink()
    else:
        rec.write_bytes(blob)
    return rec


@pytest.mark.parametrize("how", list(DAMAGE))
def test_a_missing_or_damaged_pull_record_is_warned_by_readers_and_refused_by_gold_export(pulled, tmp_path, how):
    s = _copy(pulled, tmp_path)
    rec = _damage(s, how)
    ratings = s / "rounds" / "1" / "ratings.csv"
    text = ratings.read_text(encoding="utf-8")  # and the ratings edited: the guard must still hold
    ratings.write_text(text.replace("Unsupported", "Supported", 1), encoding="utf-8")
    said = f"{rec.parent}/{DAMAGE[how][1]} {ratings} cannot be checked against its pull"
    for cmd in _readers(s, tmp_path)[:5]:
        res = run(*cmd, "--round", "1") if cmd[0] == "agree" else run(*cmd)
        assert res.exit_code == 0, (cmd, res.output)
        assert said in res.output, (cmd, res.output)
    line = error_line(run("gold", "export", "--study", s))
    assert said in line and "no gold release written" in line and "--allow-edited-ratings" in line, line
    assert not (s / "gold").exists() or not any((s / "gold").iterdir())
    res = run("gold", "export", "--study", s, "--allow-edited-ratings")
    assert res.exit_code == 0, res.output
    assert "rounds/1/ratings.csv cannot be checked against its pull (pull.json missing or damaged)" in res.output
    man = json.loads((s / "gold" / "v1" / "manifest.json").read_text(encoding="utf-8"))
    assert [(e["round"], e.get("unchecked")) for e in man["sources"]["edited_ratings"]] == [(1, True)]


def test_a_ratings_file_put_there_by_hand_on_its_own_is_not_warned(pulled, tmp_path):
    """A guard, not a fix: a ``ratings.csv`` without the ``invalid.csv`` and ``pull.json`` a pull
    writes with it was put there by hand (README); nothing to check it against, nothing said."""
    s = _copy(pulled, tmp_path)
    for name in ("pull.json", "invalid.csv"):
        (s / "rounds" / "1" / name).unlink()
    res = run("agree", "--study", s, "--round", "1")
    assert res.exit_code == 0 and "pull.json" not in res.output, res.output


def _drop_last_round_entry(s: Path) -> None:
    toml = s / "study.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text[: text.rindex("[[rounds]]")], encoding="utf-8")


def test_a_round_entry_deleted_under_pulled_ratings_is_said_refused_and_put_back(pulled, tmp_path):
    s = _copy(pulled, tmp_path)
    _drop_last_round_entry(s)
    said = (
        f"{s / 'study.toml'}: no [[rounds]] entry for round 2, but {s / 'rounds' / '2'} holds ratings a pull wrote "
        "(pull.json)"
    )
    for cmd in _readers(s, tmp_path)[:5]:
        res = run(*cmd)
        assert res.exit_code == 0 and said in res.output, (cmd, res.output)
    assert said in run("agree", "--study", s, "--round", "2").output
    line = error_line(run("gold", "export", "--study", s, "--allow-edited-ratings"))
    assert said in line and "no gold release written" in line, line
    assert not (s / "gold").exists() or not any((s / "gold").iterdir())
    res = run("study", "round", s, "2", "--main")
    assert res.exit_code == 0, res.output
    assert f"entry put back in study.toml for the ratings {s / 'rounds' / '2'} holds" in res.output
    back, was = Study.open(s).rounds[1].to_dict(), Study.open(pulled).rounds[1].to_dict()
    assert back["created_at"] == json.loads((s / "rounds" / "2" / "pull.json").read_text())["pulled_at"]
    for d in (back, was):  # the times: the pull's, within a second of the entry's own
        del d["created_at"]
        for t in d["tables"].values():
            del t["pulled_at"]
    assert back == was
    res = run("gold", "export", "--study", s)
    assert res.exit_code == 0 and "no [[rounds]] entry" not in res.output, res.output


def test_a_rated_item_without_its_unit_is_named_by_every_reader(pulled, tmp_path):
    s = _copy(pulled, tmp_path)
    units = s / "units.jsonl"
    lines = units.read_text(encoding="utf-8").splitlines(keepends=True)
    gone = [ln for ln in lines if '"C-3"' in ln]
    assert len(gone) == 1, lines
    units.write_text("".join(ln for ln in lines if ln not in gone), encoding="utf-8")
    said = (
        f"{units}: no unit for 1 item(s) rated in {s / 'rounds' / '1' / 'ratings.csv'} ('C-3'): the record of what "
        "the raters were shown is lost"
    )
    for cmd in _readers(s, tmp_path)[:6]:
        res = run(*cmd)
        assert res.exit_code == 0 and said in res.output, (cmd, res.output)
    assert f"{units}: no unit for 1 item(s) rated in {s / 'rounds' / '2' / 'ratings.csv'} ('C-3')" in res.output


def test_a_study_whose_units_are_all_there_says_nothing_of_them(pulled, tmp_path):
    """A guard: the warning is not said of an intact study."""
    s = _copy(pulled, tmp_path)
    for cmd in _readers(s, tmp_path)[:6]:
        res = run(*cmd)
        assert res.exit_code == 0 and "no unit for" not in res.output, (cmd, res.output)


@pytest.mark.parametrize("n", [1, 2])
def test_a_ratings_file_deleted_beside_its_pull_record_is_refused_by_every_reader(pulled, tmp_path, n):
    """M09: "no ratings pulled yet" was false for round 1; with round 2's file deleted, gold was
    built from round 1 alone without a word."""
    s = _copy(pulled, tmp_path)
    ratings = s / "rounds" / str(n) / "ratings.csv"
    ratings.unlink()
    for cmd in _readers(s, tmp_path):
        line = error_line(run(*cmd))
        assert line == (
            f"Error: {ratings}: missing, but {ratings.parent / 'pull.json'} records its pull: deleted by hand? restore "
            f"it from a backup (or move {ratings.parent} out of the study and pull round {n} again)"
        ), (cmd, line)
    assert not (s / "gold").exists() or not any((s / "gold").iterdir())


def test_status_names_ratings_by_a_rater_renamed_in_study_toml(pulled, tmp_path):
    """M08: status showed 'onc_bb 0 / 10' and never mentioned the ratings by onc_b."""
    s = _copy(pulled, tmp_path)
    _edit_toml(s, '"onc_b",', '"onc_bb",')
    res = run("status", "--study", s)
    assert res.exit_code == 0, res.output
    for n, k in ((1, 10), (2, 3)):
        assert (
            f"warning: {s / 'rounds' / str(n) / 'ratings.csv'}: {k} ratings by 'onc_b', not a rater of the study "
            f"({s / 'study.toml'} lists onc_a, onc_bb): renamed or removed by hand?"
        ) in res.output, res.output
    assert "not a rater of the study" not in run("status", "--study", pulled).output


def _released_twice(pulled: Path, tmp_path: Path) -> Path:
    s = _copy(pulled, tmp_path)
    for extra in ((), ("--force",)):
        res = run("gold", "export", "--study", s, *extra)
        assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (s / "gold").iterdir()) == ["v1", "v2"]
    return s


def test_gold_export_over_a_changed_latest_release_is_refused(pulled, tmp_path):
    """G05: v2 was written naming an edited v1 as its previous (and an unchanged gold was answered
    with the edited release as already released)."""
    s = _released_twice(pulled, tmp_path)
    f = s / "gold" / "v2" / "gold.csv"
    f.chmod(0o644)
    f.write_text(f.read_text(encoding="utf-8").replace("unresolved", "unanimous", 1), encoding="utf-8")
    for extra in ((), ("--force",)):
        line = error_line(run("gold", "export", "--study", s, *extra))
        assert line == (
            f"Error: {f}: changed since release v2 was written (its SHA-256 is not the one manifest.json recorded); "
            "no gold release written: a release is never edited, and the next one would name it as its previous: "
            "restore it from a backup first"
        ), line
    assert sorted(p.name for p in (s / "gold").iterdir()) == ["v1", "v2"]


@pytest.mark.parametrize("how", ["folders swapped", "manifest copied"])
def test_a_release_folder_holding_another_releases_manifest_is_refused_by_its_readers(pulled, tmp_path, how):
    """M06/T04: swapped folders were read as each other's release without a word; a manifest
    copied over another was blamed on an untouched gold.csv."""
    s = _released_twice(pulled, tmp_path)
    g = s / "gold"
    if how == "folders swapped":
        (g / "v1").rename(g / "vx")
        (g / "v2").rename(g / "v1")
        (g / "vx").rename(g / "v2")
    else:
        (g / "v2" / "manifest.json").chmod(0o644)
        shutil.copyfile(g / "v1" / "manifest.json", g / "v2" / "manifest.json")
    said = f"{g / 'v2' / 'manifest.json'}: the manifest of release v1, in folder v2 (release folders renamed or swapped"
    for cmd in (("gold", "diff", "v1", "v2", "--study", s), ("gold", "export", "--study", s, "--force")):
        line = error_line(run(*cmd))
        assert line.startswith("Error: ") and said in line or "the manifest of release v2, in folder v1" in line, line
    res = run("gold", "list", "--study", s)
    assert f"Warning: {said}" in res.output, res.output


def test_a_release_folder_named_v02_is_still_release_2(pulled, tmp_path):
    """A guard (campaign 5 H13: correct before and after)."""
    s = _released_twice(pulled, tmp_path)
    (s / "gold" / "v2").rename(s / "gold" / "v02")
    res = run("gold", "diff", "v1", "v02", "--study", s)
    assert res.exit_code == 0, res.output


def test_a_pull_record_of_an_older_goldboard_without_a_digest_is_read_without_a_word(pulled, tmp_path):
    """A guard (README: rounds pulled by an older goldboard carry no digest and are not checked)."""
    s = _copy(pulled, tmp_path)
    rec = s / "rounds" / "1" / "pull.json"
    data = json.loads(rec.read_text(encoding="utf-8"))
    del data["ratings_sha256"]
    rec.write_text(json.dumps(data), encoding="utf-8")
    res = run("agree", "--study", s, "--round", "1")
    assert res.exit_code == 0 and "pull.json" not in res.output, res.output
    assert run("gold", "export", "--study", s).exit_code == 0


def _moved(s: Path, n: int, name: str) -> Path:
    """Round ``n``'s folder renamed ``name`` (``None``: deleted)."""
    src = s / "rounds" / str(n)
    if name is None:
        shutil.rmtree(src)
        return src
    src.rename(s / "rounds" / name)
    return s / "rounds" / name


def _tree(s: Path) -> list:
    return sorted((p.relative_to(s), p.stat().st_size if p.is_file() else -1) for p in s.rglob("*"))


@pytest.mark.parametrize("name", ["01", "1\u200b", " 1", "\uff11", "old"])
def test_a_round_folder_renamed_is_named_by_every_reader(pulled, tmp_path, name):
    """H16 (campaign 6, a regression): rounds/1 renamed rounds/01 -- status printed an empty
    "round 1:" and exit 0; agree and gold export said "rounds/1/pull.json records it", which was
    gone too.  Every reader now names the missing folder and the one that holds it (failed on the
    code before: status exit 0, the others the false pull.json line)."""
    s = _copy(pulled, tmp_path)
    _moved(s, 1, name)
    shown = str(s / "rounds" / name) if name.isprintable() and name == name.strip() else f"{s / 'rounds'}/{name!r}"
    want = (
        f"Error: {s / 'rounds' / '1'}: missing, but {s / 'study.toml'} records round 1's pull (from r1.csv); "
        f"{shown} holds it: renamed? rename it back to {s / 'rounds' / '1'} (its ratings would otherwise drop out of "
        "every result)"
    )
    before = _tree(s)
    for cmd in _readers(s, tmp_path):
        assert error_line(run(*cmd)) == want, cmd
    assert _tree(s) == before  # nothing written
    assert not (tmp_path / "f.csv").exists() and not (tmp_path / "r.md").exists()


def test_a_round_folder_deleted_is_named_by_every_reader(pulled, tmp_path):
    """Round 2's folder deleted: readers read round 1 alone as the whole study (failed on the code
    before: every reader exit 0)."""
    s = _copy(pulled, tmp_path)
    _moved(s, 2, None)
    want = (
        f"Error: {s / 'rounds' / '2'}: missing, but {s / 'study.toml'} records round 2's pull (from r2.csv); "
        "deleted by hand? restore it from a backup (its ratings would otherwise drop out of every result)"
    )
    for cmd in _readers(s, tmp_path):
        assert error_line(run(*cmd)) == want, cmd


def test_a_round_folder_renamed_is_named_without_a_record_in_study_toml(pulled, tmp_path):
    """rounds/2 renamed rounds/old in a study whose study.toml records no pull of files for it
    (a Label Studio round): its pull.json names the round (failed on the code before: exit 0,
    round 1 read as the whole study)."""
    s = _copy(pulled, tmp_path)
    toml = s / "study.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text[: text.rindex("[rounds.tables")], encoding="utf-8")  # round 2: no tables
    _moved(s, 2, "old")
    want = (
        f"Error: {s / 'rounds' / '2'}: missing, but {s / 'rounds' / 'old'} holds round 2's pull record (pull.json): "
        f"renamed? rename it back to {s / 'rounds' / '2'} (its ratings would otherwise drop out of every result)"
    )
    for cmd in _readers(s, tmp_path):
        assert error_line(run(*cmd)) == want, cmd


@pytest.mark.parametrize("name", ["01", "2\u200b", "03"])
def test_a_folder_that_reads_as_a_round_number_is_refused(pulled, tmp_path, name):
    """A copy of a round folder beside it under a look-alike name, or a look-alike of a round the
    study does not have: no reader reads it, so each says so (failed on the code before: exit 0,
    and rounds/03 was read as round 3)."""
    s = _copy(pulled, tmp_path)
    shutil.copytree(s / "rounds" / "1", s / "rounds" / name)
    n = int(name.strip("\u200b"))
    shown = str(s / "rounds" / name) if name.isprintable() else f"{s / 'rounds'}/{name!r}"
    for cmd in _readers(s, tmp_path):
        line = error_line(run(*cmd))
        if n <= 2:
            assert line == (
                f"Error: {shown}: reads as round {n}, beside {s / 'rounds' / str(n)}, but no command reads it: a "
                "copy? move it out of the study"
            ), cmd
        else:
            assert line.startswith(f"Error: {shown}: not a round folder name") and (
                f"reads as round 3: renamed by hand? rename it back to {s / 'rounds' / '3'}" in line
            ), (cmd, line)


def test_status_names_an_entry_of_rounds_that_no_command_reads(pulled, tmp_path):
    """rounds/sub (a study made inside rounds/ by an older goldboard, campaign 6 W12) is read by no
    command: status names it (failed on the code before: not a word), the others read on."""
    s = _copy(pulled, tmp_path)
    (s / "rounds" / "sub").mkdir()
    (s / "rounds" / ".DS_Store").write_bytes(b"\0")
    res = run("status", "--study", s)
    assert res.exit_code == 0, res.output
    assert (
        f"warning: {s / 'rounds' / 'sub'}: not a round folder (goldboard names them {s / 'rounds' / '1'}, "
        f"{s / 'rounds' / '2'}, ...); no command reads it: move it out of the study"
    ) in res.output
    assert ".DS_Store" not in res.output
    assert run("agree", "--study", s).exit_code == 0


def test_status_names_an_entry_of_gold_that_no_command_reads(pulled, tmp_path):
    """gold/v1_old (a release moved aside by hand) is read by no command: status names it (failed
    on the code before: not a word); hidden folders (an export's temporary one) are not named."""
    s = _released_twice(pulled, tmp_path)
    (s / "gold" / "v1_old").mkdir()
    (s / "gold" / ".v3.x.tmp").mkdir()
    res = run("status", "--study", s)
    assert res.exit_code == 0, res.output
    assert (
        f"warning: {s / 'gold' / 'v1_old'}: not a release folder (releases are named {s / 'gold' / 'v1'}, "
        f"{s / 'gold' / 'v2'}, ...); no command reads it: move it out of the study"
    ) in res.output
    assert ".v3" not in res.output and "not a release folder" not in run("status", "--study", pulled).output


def _release_readers(s: Path, tmp_path: Path) -> list[tuple]:
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"case_id": f"C-{n}", "predicted_label": "Supported"}) + "\n" for n in (1, 2)))
    return [
        ("score", "--study", s, "--predictions", pred),
        ("gold", "list", "--study", s),
        ("gold", "diff", "v1", "v2", "--study", s),
        ("report", "--study", s, "--format", "markdown", "-o", tmp_path / "r.md", "--no-supplement"),
        ("status", "--study", s),
        ("gold", "export", "--study", s, "--force"),
    ]


@pytest.mark.parametrize("name", ["v2\u200b", "V2", " v2", "v2 ", "\u03bd2"])
def test_a_release_folder_renamed_to_a_look_alike_is_refused_by_every_reader(pulled, tmp_path, name):
    """N35: gold/v2 renamed 'v2<U+200B>' -- score took v1 for the latest release without a word, and
    gold export --force wrote a new gold/v2 beside it (failed on the code before: exit 0 both)."""
    s = _released_twice(pulled, tmp_path)
    (s / "gold" / "v2").rename(s / "gold" / name)
    shown = str(s / "gold" / name) if name.isprintable() and name == name.strip() else f"{s / 'gold'}/{name!r}"
    want = (
        f"Error: {shown}: reads as release v2 but is not a release name (releases are named v1, v2, ...): renamed "
        f"by hand? rename it back to {s / 'gold' / 'v2'}; until then no command reads the releases (an earlier "
        "release would be taken for the latest)"
    )
    for cmd in _release_readers(s, tmp_path):
        assert error_line(run(*cmd)) == want, cmd
    assert sorted(p.name for p in (s / "gold").iterdir()) == sorted(["v1", name])  # nothing written


def test_a_release_folder_v02_and_hidden_folders_are_no_look_alikes(pulled, tmp_path):
    """A guard: v02 is release 2 (campaign 5 H13), a hidden folder is an export's own."""
    s = _released_twice(pulled, tmp_path)
    (s / "gold" / "v2").rename(s / "gold" / "v02")
    (s / "gold" / ".v3.x.tmp").mkdir()
    res = run("score", "--study", s, "--predictions", _release_readers(s, tmp_path)[0][-1])
    assert res.exit_code == 0 and "(v02)" in res.output, res.output


def test_a_release_deleted_under_a_later_one_is_said_and_refused_by_gold_export(pulled, tmp_path):
    """N31: gold/v1 deleted while v2's manifest names it as its previous -- gold export --force
    wrote v3 and status said nothing (failed on the code before: exit 0, no word)."""
    s = _released_twice(pulled, tmp_path)
    v1 = s / "gold" / "v1"
    for f in v1.iterdir():
        f.chmod(0o644)
    shutil.rmtree(v1)
    said = (
        f"{v1}: missing, but release v2's manifest ({s / 'gold' / 'v2' / 'manifest.json'}) names it as its previous "
        "release: deleted or moved by hand? restore it from a backup"
    )
    for cmd in _release_readers(s, tmp_path)[:2] + _release_readers(s, tmp_path)[3:5]:
        res = run(*cmd)
        assert res.exit_code == 0 and said in res.output, (cmd, res.output)
    assert f"warning: {said}" in run("status", "--study", s).output
    for extra in ((), ("--force",)):
        line = error_line(run("gold", "export", "--study", s, *extra))
        assert line == (
            f"Error: {said}; no gold release written: the release chain is broken (to release anyway, pass "
            "--allow-missing-releases: the manifest records the missing releases)"
        ), line
    assert sorted(p.name for p in (s / "gold").iterdir()) == ["v2"]
    res = run("gold", "export", "--study", s, "--force", "--allow-missing-releases")
    assert res.exit_code == 0, res.output
    assert f"Warning: release v1 is missing from {s / 'gold'}; released as asked, the manifest says so" in res.output
    man = json.loads((s / "gold" / "v3" / "manifest.json").read_text(encoding="utf-8"))
    assert man["missing_releases"] == ["v1"] and man["previous"] == "v2"
    res = run("gold", "export", "--study", s, "--force")  # the gap is recorded: said once, not again
    assert res.exit_code == 0 and "missing" not in res.output, res.output


def test_an_intact_release_chain_says_nothing(pulled, tmp_path):
    """A guard: no chain warning on releases as gold export wrote them."""
    s = _released_twice(pulled, tmp_path)
    for cmd in _release_readers(s, tmp_path):
        res = run(*cmd)
        assert res.exit_code == 0 and "missing" not in res.output and "reads as" not in res.output, (cmd, res.output)


@pytest.mark.parametrize("inside", ["rounds/sub", "rounds", "gold/x", "judges/j", ".cache/s"])
def test_study_init_inside_another_studys_own_folders_is_refused(pulled, tmp_path, inside):
    """W12: `study init X/rounds/sub` made a study inside another study's rounds/ (failed on the
    code before: exit 0, "Created study 'sub'")."""
    s = _copy(pulled, tmp_path)
    target = s / inside
    before = _tree(s)
    env = {"GOLDBOARD_SERVER_DIR": str(tmp_path / "srv")}  # "recorded in study.toml" was said before the refusal
    res = run("study", "init", target, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", env=env)
    assert "recorded in study.toml" not in res.output, res.output
    line = error_line(res)
    assert (
        line.startswith(f"Error: {target}: is inside the study in {s} (")
        and (
            f"a study is never made inside another study's own folders: give a folder outside them (a folder directly "
            f"in {s}, e.g. {s / target.name}, is fine)"
        )
        in line
    ), line
    assert _tree(s) == before


@pytest.mark.parametrize("beside", ["sub", "reports/sub"])
def test_study_init_beside_another_studys_files_is_made(pulled, tmp_path, beside):
    """A guard: a study in a folder directly in another study's folder (or in its reports/) is
    another study beside its files."""
    s = _copy(pulled, tmp_path)
    res = run("study", "init", s / beside, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    assert res.exit_code == 0 and (s / beside / "study.toml").is_file(), res.output
    assert run("agree", "--study", s).exit_code == 0


@pytest.mark.parametrize(
    "extra,needle",
    [("onc_b", "rater 'onc_b' is listed twice in [study] raters"), ("ONC_B", "'onc_b' and 'ONC_B' in [study] raters")],
)
@pytest.mark.parametrize(
    "cmd",
    [("agree",), ("status",), ("flag",), ("report", "--format", "markdown"), ("gold", "export", "--force"),
     ("calibrate", "--rule", "kappa_lower>=0.5")],
    ids=lambda c: c[0] if len(c) == 1 or c[0] != "gold" else "gold export",
)  # fmt: skip
def test_a_rater_listed_twice_in_study_toml_is_one_error_for_every_reader(released, tmp_path, extra, needle, cmd):
    toml = released.path / "study.toml"
    text = toml.read_text()
    assert '    "onc_b",\n' in text
    toml.write_text(text.replace('    "onc_b",\n', f'    "onc_b",\n    "{extra}",\n', 1))
    before = study_files(released.path)
    out = tmp_path / "out.txt"
    res = run(*cmd[:2] if cmd[0] == "gold" else cmd[:1], "--study", released.path, *cmd[2 if cmd[0] == "gold" else 1 :],
              *(["-o", out] if cmd[0] in ("agree", "flag", "report") else []))  # fmt: skip
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: {toml}: ") and needle in line, res.output
    assert study_files(released.path) == before and not out.exists()


def test_a_study_toml_with_a_bom_is_read(released):
    toml = released.path / "study.toml"
    toml.write_bytes(b"\xef\xbb\xbf" + toml.read_bytes())
    res = run("status", "--study", released.path)
    assert res.exit_code == 0 and "adjudication (dr_lee)" in res.output, res.output


@pytest.mark.parametrize("extra", [[], ["--by", "case_id"]])  # the column fast path, and the pandas path
def test_agree_names_ratings_by_a_rater_removed_from_study_toml(tmp_path, extra):
    """MD9: onc_b removed from study.toml by hand was still analysed by agree with no note."""
    import re

    s = demo_study(tmp_path)
    toml = s / "study.toml"
    text = toml.read_text()
    edited = re.sub(r'"onc_b",?\s*', "", text, count=1)
    assert edited != text
    toml.write_text(edited)
    # a study of one rater is one that `study init` refuses: every reader refuses it, naming study.toml
    # (campaign 5 H01); a rater removed from a larger study is named by status (test_status_names_ratings_by_a_rater_renamed_in_study_toml above)
    res = run("agree", "--study", s, *extra, code=1)
    err = [ln for ln in res.output.splitlines() if ln.startswith("Error:")]
    assert len(err) == 1 and f"{toml}: [study] raters: 1 rater(s); a study needs at least two" in err[0], res.output
    res = run("agree", "--study", demo_study(tmp_path / "b"))
    assert "not a rater of the study" not in res.output


def test_m09_a_deleted_ratings_file_is_named(openmtb_pulled):
    (openmtb_pulled / "rounds/1/ratings.csv").unlink()
    for args in (["agree"], ["flag"], ["calibrate", "--rule", "kappa_lower>=0.6"]):
        error_naming(run_ok(*args, "--study", openmtb_pulled, code=1), "rounds/1/ratings.csv: missing, but ")


def test_m09_a_deleted_later_round_is_named_not_passed_over(openmtb_pulled):
    run_ok("pull", "--study", openmtb_pulled, "--round", "2", "--from-table", OPENMTB, *OPENMTB_WIDE)
    (openmtb_pulled / "rounds/2/ratings.csv").unlink()
    for args in (["agree"], ["flag"], ["adjudicate", "sheet", "-o", openmtb_pulled.parent / "r.xlsx"]):
        error_naming(run_ok(*args, "--study", openmtb_pulled, code=1), "rounds/2/ratings.csv: missing, but ")
