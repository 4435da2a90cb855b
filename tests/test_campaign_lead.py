"""Two silent acceptances an independent campaign found after issue 23 (the other ones:
tests/test_campaign_inputs.py):

- a hand-edited decisions log whose decision in force is not a value of the schema built gold
  from it (``gold_value=Bogus``): ``gold export`` now refuses, naming the log entry;
- ``--adjudicator-name "dr_chair=onc_a"`` logged rater onc_a's decisions as independent: a
  decision by a rater of the study (mapped or written) is recorded as not independent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from test_adjudication_roundtrip import fill, make_study, run  # noqa: E402
from test_flags import P  # noqa: E402

from goldboard.adjudicate.decisions import read_decisions  # noqa: E402


def _sheet(study, tmp_path, rows):
    p = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", p).exit_code == 0
    fill(p, rows)
    return p


def test_gold_export_refuses_a_hand_edited_decision_the_schema_cannot_hold(tmp_path):
    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, "ECOG 2", "dr_lee")})
    assert run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee").exit_code == 0
    log = study.decisions_path
    entry = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    entry["decision"], entry["id"] = "Bogus", "D000002"  # a new id: a repeated one is refused first
    log.write_text(log.read_text(encoding="utf-8") + json.dumps(entry) + "\n", encoding="utf-8")
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code != 0
    line = res.output.strip().splitlines()[-1]
    assert "decisions.jsonl: entry" in line and "'Bogus' is not a value of safety_label" in line, line
    assert "item 'C-1'" in line or 'item "C-1"' in line, line
    assert not study.gold_dir.exists() or not any(study.gold_dir.iterdir())  # nothing written


def test_gold_export_accepts_the_log_goldboard_wrote(tmp_path):
    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, "ECOG 2", "dr_lee")})
    assert run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee").exit_code == 0
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output


def test_a_spelling_mapped_to_a_rater_is_recorded_as_not_independent(tmp_path):
    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, "ECOG 2", "dr_chair")})
    res = run(
        "adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_chair",
        "--adjudicator-name", "dr_chair=onc_a",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    (d,) = read_decisions(study.decisions_path)
    assert d["adjudicator"] == "onc_a" and d["adjudicator_as_written"] == "dr_chair"
    assert d["independent"] is False
    assert "by onc_a, a rater of this study: recorded as not independent" in res.output


def test_an_adjudicator_who_is_not_a_rater_stays_independent(tmp_path):
    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, "ECOG 2", "dr_chair")})
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_chair")
    assert res.exit_code == 0, res.output
    (d,) = read_decisions(study.decisions_path)
    assert d["independent"] is True


def test_a_reason_cell_excel_turned_into_a_date_is_refused_naming_the_cell(tmp_path):
    import datetime as dt

    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, dt.datetime(2024, 3, 1), "dr_lee")})
    before = study.decisions_path.read_bytes() if study.decisions_path.exists() else None
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code != 0
    assert "Disagreements!" in res.output and "the Reason cell holds a date or time (2024-03-01" in res.output
    after = study.decisions_path.read_bytes() if study.decisions_path.exists() else None
    assert after == before  # nothing imported
