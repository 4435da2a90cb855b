"""Issue 23, campaign 6 (d7): messages that misled or printed what they name raw.  Each test builds the
input, runs the CLI and reads the line; each fails on the code before its fix (checked by hand on the
commit before, by reverting the fix).

1. P24: ``--round 7`` in a study with round 1 said "rounds/7/ratings.csv: not pulled yet (run `goldboard
   pull --study S --round 7`)", advice ``pull`` refuses ("a new round is round 2"): every command that
   reads ``--round`` (agree, flag, report, calibrate, adjudicate sheet/push, gold export, plan size
   --from-study) names the rounds the study has ("the study has round 1; round 7 does not exist");
   a round recorded in study.toml but not pulled is still "not pulled yet".
2. F03/F04: an item id that is ``true``, ``["MTB-0001"]``, an object or ``1.5`` was "an empty item
   id (the record names no item)" in a Prodigy or doccano file, and in a Label Studio export it was
   stored as the item ``True`` / ``['C-1']`` / ``{'a': 1}`` (``false`` and ``0`` held out as "no
   item id"): refused naming what the value is, the file and the line or task; ``0`` is item ``0``.
3. J04/N53: the judge warning "labels of items no clinician rated are not used (e.g. MTB-1<U+200B>)"
   and the sheet import error 'decision "Supported<U+200B>" is not a value of ...' printed the
   zero-width space raw, so the line named a value that looks like an allowed one: the value is
   quoted with the invisible character escaped, and every Error/Warning line escapes characters
   that print as nothing or as a plain space (Cf, Zs: ``text.one_line``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import error_line, invoke_cli  # noqa: E402
from test_adjudication_roundtrip import make_study  # noqa: E402

# --------------------------------------------------------------------------- 1. a round beyond the last

ROUND_CMDS = [
    ("agree",), ("flag",), ("report", "--format", "markdown"), ("calibrate", "--rule", "kappa_lower>=0.5"),
    ("adjudicate", "sheet", "-o", "{tmp}/s.xlsx"), ("gold", "export"), ("plan", "size", "--from-study", "--width", "0.3"),
]  # fmt: skip


def _round_cmd(cmd, study, tmp_path, n):
    sub = 2 if cmd[0] in ("adjudicate", "gold", "plan") else 1
    args = [a.format(tmp=tmp_path) for a in cmd[sub:]]
    return invoke_cli(*cmd[:sub], "--study", study.path, *args, "--round", n)


@pytest.mark.parametrize("cmd", ROUND_CMDS, ids=lambda c: " ".join(c[:2]))
def test_p24_a_round_the_study_does_not_have_is_named_as_such(tmp_path, cmd):
    study = make_study(tmp_path)
    res = _round_cmd(cmd, study, tmp_path, 7)
    assert res.exit_code == 1, res.output
    assert error_line(res) == f"Error: {study.path}: --round 7: the study has round 1; round 7 does not exist"
    assert "pull" not in res.output  # no advice that `pull --round 7` would refuse
    assert not (tmp_path / "s.xlsx").exists() and not (study.path / "gold").exists()


def test_p24_a_recorded_round_not_pulled_yet_is_still_advised_to_be_pulled(tmp_path):
    study = make_study(tmp_path)
    for n in (1, 2):  # round 1 (ratings written by hand) recorded, then a new round 2 without ratings
        assert invoke_cli("study", "round", study.path, n, "--main").exit_code == 0
    line = error_line(invoke_cli("agree", "--study", study.path, "--round", 2))
    assert (
        line == f"Error: {study.ratings_path(2)}: not pulled yet (run `goldboard pull --study {study.path} --round 2`)"
    )
    line = error_line(invoke_cli("agree", "--study", study.path, "--round", 3))
    assert line == f"Error: {study.path}: --round 3: the study has rounds 1-2; round 3 does not exist"
    line = error_line(invoke_cli("calibrate", "--study", study.path, "--rule", "kappa_lower>=0.5", "--round", 2))
    assert line == f"Error: --round: {study.ratings_path(2)}: round 2 is not pulled yet"  # was "round_: ..."


def test_p24_rounds_with_a_gap_are_listed(tmp_path):
    study = make_study(tmp_path)
    (study.path / "rounds" / "3").mkdir()
    study.ratings_path(3).write_bytes(study.ratings_path(1).read_bytes())
    line = error_line(invoke_cli("flag", "--study", study.path, "--round", 2))
    assert line == f"Error: {study.path}: --round 2: the study has rounds 1, 3; round 2 does not exist"
