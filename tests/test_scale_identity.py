"""The outputs of the study commands, byte for byte, pinned before the column-wise rewrite (issue 25).

Studies are built the way a user builds them (``study init`` + ``pull --from-table``): the
OpenMTB-Audit file (``cases example openmtb``) and synthetic wide tables of SMALL_ITEMS (fast path)
and BIG_ITEMS (``slow``) items x 2 raters with the schema's alias, blank cells and values outside
the schema (held out to invalid.csv); the synthetic studies also get adjudication decisions in
their log (changed values, confirmations, ``unresolved``, a decision replacing an earlier one, one
on an item the raters agreed on) through :func:`record_decisions`, the log's one writer. For each,
the SHA-256 of ratings.csv, invalid.csv, ``flag --format csv`` (all raters; and
``--triggered-only``), ``flag --format json``, ``gold export`` (gold.csv, and manifest.json
without its ``created_at`` and the decision log's SHA-256), ``agree --format json`` and the
report's Markdown table lines is compared with ``tests/data/scale/digests.json``, which holds
what the code wrote before the rewrite. A change to any of these bytes fails the test.

The digests are regenerated only on purpose:

    .venv/bin/python tests/test_scale_identity.py --regenerate

The 20,000-item study (40,000 ratings) takes tens of seconds to build on the shared 2-core
machine, so it is marked ``slow``; OpenMTB-Audit and the 2,000-item study stay in the fast path.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

DIGESTS = Path(__file__).parent / "data" / "scale" / "digests.json"
SMALL_ITEMS = 2_000
BIG_ITEMS = 20_000
DECIDED_AT = "2026-01-15T09:30:00+00:00"
LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information", "Unsafe"]
RATERS = "onc_a=oncologist_a_label,onc_b=oncologist_b_label"


def synth_label(i: int, salt: int) -> str:
    return LABELS[((i * 2654435761 + salt) >> 7) % len(LABELS)]


def write_synth_table(path: Path, n: int) -> None:
    """A wide table in the OpenMTB-Audit layout; b agrees with a on about 70% of items, with
    every pair of labels among the disagreements; aliases, blanks and a few invalid values."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("case_number,case_id,benchmark_label,oncologist_a_label,oncologist_b_label\n")
        for i in range(n):
            a = synth_label(i, 0)
            b = a if (i * 7919) % 10 < 7 else synth_label(i * 31 + 7, 12345)
            if i % 997 == 5:
                b = ""
            if i % 1499 == 11:
                a = "Probably fine"  # outside the schema: held out, with provenance
            if a == "Insufficient Information" and i % 13 == 0:
                a = "Insufficient Info"
            if b == "Supported" and i % 17 == 0:
                b = " supported "  # case and spaces the pull canonicalises
            fh.write(f"{i + 1},S{(i * 7) % n:06d}-{i},{synth_label(i, 777)},{a},{b}\n")


def add_decisions(study: Path, n: int) -> None:
    """Decisions on about 1 in 40 items (a fixed pattern), in two batches: the second changes
    some of the first's (with a reason of its own) and confirms others."""
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    log = study / "decisions.jsonl"

    def batch(items, salt, reason):
        out = []
        for k, i in enumerate(items):
            value = "unresolved" if k % 9 == 4 else synth_label(i, salt)
            out.append(
                Proposed(
                    f"S{(i * 7) % n:06d}-{i}",
                    "safety_label",
                    value,
                    reason=f"{reason} {k}",
                    adjudicator=f"adj_{k % 3}",
                    independent=k % 5 != 0,
                    where=f"row {k}",
                )
            )
        return out

    first = [i for i in range(0, n, 40)]
    record_decisions(log, batch(first, 4242, "board"), source="sheet", sheet="r1.xlsx", now=DECIDED_AT)
    again = first[::7]
    record_decisions(
        log, batch(again, 99, "second look"), source="sheet", sheet="r2.xlsx", now=DECIDED_AT.replace("09:30", "11:00")
    )


def _run(cli, *args) -> str:
    res = cli(*args)
    assert res.exit_code == 0, res.output
    return res.stdout


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _rounded_json(text: str) -> bytes:
    """agree's JSON with every number to 10 significant digits: the last bits of a float sum move with
    the numpy/pandas build (pandas 3 vs 2 moved the 2,000-item study's), a value of the study does not."""

    def rounded(x):
        if isinstance(x, float):
            return float(f"{x:.10g}")
        if isinstance(x, dict):
            return {k: rounded(v) for k, v in x.items()}
        if isinstance(x, list):
            return [rounded(v) for v in x]
        return x

    return json.dumps(rounded(json.loads(text)), sort_keys=True).encode()


def study_digests(cli, root: Path, table: Path, decided: int = 0) -> dict[str, str]:
    """Build the study from ``table`` in ``root`` (with :func:`add_decisions` over ``decided``
    items when not 0) and digest every pinned output."""
    s = root / "S"
    _run(cli, "study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    pull = ["pull", "--study", s, "--from-table", table, "--item-col", "case_id", "--raters", RATERS]
    _run(cli, *pull, "--field", "safety_label")
    if decided:
        add_decisions(s, decided)
    out: dict[str, str] = {}
    for name in ("ratings.csv", "invalid.csv"):
        out[name] = _sha((s / "rounds" / "1" / name).read_bytes())
    _run(cli, "flag", "--study", s, "--format", "csv", "-o", root / "flags.csv")
    out["flag.csv"] = _sha((root / "flags.csv").read_bytes())
    _run(cli, "flag", "--study", s, "--format", "csv", "--triggered-only", "-o", root / "trig.csv")
    out["flag-triggered.csv"] = _sha((root / "trig.csv").read_bytes())
    _run(cli, "flag", "--study", s, "--format", "json", "-o", root / "flags.json")
    out["flag.json"] = _sha((root / "flags.json").read_bytes())
    _run(cli, "agree", "--study", s, "--format", "json", "-o", root / "agree.json")
    out["agree.json"] = _sha(_rounded_json((root / "agree.json").read_text(encoding="utf-8")))
    _run(cli, "gold", "export", "--study", s)
    out["gold.csv"] = _sha((s / "gold" / "v1" / "gold.csv").read_bytes())
    manifest = json.loads((s / "gold" / "v1" / "manifest.json").read_text(encoding="utf-8"))
    manifest.pop("created_at")
    manifest.pop("study_created", None)  # issue 23 (n9): the study's creation time, a new entry (a time)
    if "decisions" in manifest["sources"]:  # the log holds a random batch id per write
        manifest["sources"]["decisions"].pop("sha256")
        # issue 23: the entries' digest (random batch ids too) and last id, pinned before they existed
        manifest["sources"]["decisions"].pop("entries_sha256", None)
        manifest["sources"]["decisions"].pop("last_id", None)
    # issue 23 (h7): gold resolution's new manifest entries, pinned before they existed
    manifest["rounds"].pop("decisions_superseded", None)
    manifest["rounds"].pop("unresolved_missing_rating", None)
    out["gold-manifest"] = _sha(json.dumps(manifest, sort_keys=True).encode())
    _run(cli, "report", "--study", s, "--format", "markdown", "-o", root / "report.md")
    lines = (root / "report.md").read_text(encoding="utf-8").splitlines()
    out["report-tables"] = _sha("\n".join(x for x in lines if x.startswith("|")).encode())
    return out


def digests_of(cli, tmp: Path, study: str) -> dict[str, str]:
    """The pinned outputs of ``study``: ``openmtb`` or ``synth<N>``."""
    (tmp / study).mkdir()
    if study == "openmtb":
        _run(cli, "cases", "example", "openmtb", "-o", tmp / "openmtb.csv")
        return study_digests(cli, tmp / study, tmp / "openmtb.csv")
    n = int(study.removeprefix("synth"))
    write_synth_table(tmp / f"{study}.csv", n)
    return study_digests(cli, tmp / study, tmp / f"{study}.csv", decided=n)


STUDIES = ["openmtb", f"synth{SMALL_ITEMS}", f"synth{BIG_ITEMS}"]


def _check(cli, tmp: Path, study: str) -> None:
    pinned = json.loads(DIGESTS.read_text(encoding="utf-8"))[study]
    got = digests_of(cli, tmp, study)
    diffs = [name for name in pinned if got.get(name) != pinned[name]]
    assert not diffs, f"{study}: outputs changed: {diffs}"
    assert set(got) == set(pinned)


def test_openmtb_outputs_byte_identical_to_before_the_rewrite(cli, tmp_path):
    _check(cli, tmp_path, "openmtb")


def test_small_synthetic_outputs_byte_identical_to_before_the_rewrite(cli, tmp_path):
    _check(cli, tmp_path, f"synth{SMALL_ITEMS}")


@pytest.mark.slow
def test_20k_synthetic_outputs_byte_identical_to_before_the_rewrite(cli, tmp_path):
    _check(cli, tmp_path, f"synth{BIG_ITEMS}")


def test_synthetic_table_has_what_the_pin_needs(tmp_path):
    """The synthetic study exercises held-out values, aliases and blanks (else the pin is weak)."""
    write_synth_table(tmp_path / "t.csv", SMALL_ITEMS)
    text = (tmp_path / "t.csv").read_text(encoding="utf-8")
    for needle in ("Probably fine", "Insufficient Info,", " supported ", ",\n", "Unsafe"):
        assert needle in text, needle


def test_synthetic_decisions_cover_every_kind(tmp_path, cli):
    """The pinned decisions change values, confirm, leave open and replace (else gold's rule 1 is unpinned)."""
    from goldboard.adjudicate.decisions import read_decisions

    s = tmp_path / "S"
    write_synth_table(tmp_path / "t.csv", SMALL_ITEMS)
    _run(cli, "study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    pull = ["pull", "--study", s, "--from-table", tmp_path / "t.csv", "--item-col", "case_id"]
    _run(cli, *pull, "--raters", RATERS, "--field", "safety_label")
    add_decisions(s, SMALL_ITEMS)
    log = read_decisions(s / "decisions.jsonl")
    assert any(e["decision"] == "unresolved" for e in log)
    assert any(e.get("previous_id") and e["decision"] != e.get("previous_decision") for e in log)
    assert any(not e["independent"] for e in log)
    _run(cli, "gold", "export", "--study", s)
    gold = (s / "gold" / "v1" / "gold.csv").read_text(encoding="utf-8")
    assert ",adjudicated," in gold and ",unanimous," in gold and ",unresolved," in gold


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        raise SystemExit("usage: python tests/test_scale_identity.py --regenerate")
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import invoke_cli

    with tempfile.TemporaryDirectory(prefix="gb-scale-pin-") as d:
        digests = {study: digests_of(invoke_cli, Path(d), study) for study in STUDIES}
    DIGESTS.parent.mkdir(parents=True, exist_ok=True)
    DIGESTS.write_text(json.dumps(digests, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {DIGESTS}")
