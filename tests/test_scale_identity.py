"""The outputs of the study commands, byte for byte, pinned before the column-wise rewrite (issue 25).

Two studies are built the way a user builds them (``study init`` + ``pull --from-table``): the
OpenMTB-Audit file (``cases example openmtb``) and a synthetic wide table of SYNTH_ITEMS items x 2
raters with the schema's alias, blank cells and values outside the schema (held out to
invalid.csv). For each, the SHA-256 of ratings.csv, invalid.csv, ``flag --format csv`` (all raters;
and ``--triggered-only``), ``gold export`` (gold.csv), ``agree --format json`` and the report's
Markdown table lines is compared with ``tests/data/scale/digests.json``, which holds what the code
wrote before the rewrite. A change to any of these bytes fails the test.

The digests are regenerated only on purpose:

    .venv/bin/python tests/test_scale_identity.py --regenerate

SYNTH_ITEMS is 5,000 (10,000 ratings), not 20,000: at 20,000 items the pre-rewrite code took
well over 20 s for this test on the shared 2-core machine.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

DIGESTS = Path(__file__).parent / "data" / "scale" / "digests.json"
SYNTH_ITEMS = 5_000
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


def _run(cli, *args) -> str:
    res = cli(*args)
    assert res.exit_code == 0, res.output
    return res.stdout


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def study_digests(cli, root: Path, table: Path) -> dict[str, str]:
    """Build the study from ``table`` in ``root`` and digest every pinned output."""
    s = root / "S"
    _run(cli, "study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    pull = ["pull", "--study", s, "--from-table", table, "--item-col", "case_id", "--raters", RATERS]
    _run(cli, *pull, "--field", "safety_label")
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
    out["agree.json"] = _sha((root / "agree.json").read_bytes())
    _run(cli, "gold", "export", "--study", s)
    out["gold.csv"] = _sha((s / "gold" / "v1" / "gold.csv").read_bytes())
    _run(cli, "report", "--study", s, "--format", "markdown", "-o", root / "report.md")
    lines = (root / "report.md").read_text(encoding="utf-8").splitlines()
    out["report-tables"] = _sha("\n".join(x for x in lines if x.startswith("|")).encode())
    return out


def all_digests(cli, tmp: Path) -> dict[str, dict[str, str]]:
    (tmp / "openmtb").mkdir()
    (tmp / "synth").mkdir()
    _run(cli, "cases", "example", "openmtb", "-o", tmp / "openmtb.csv")
    write_synth_table(tmp / "synth.csv", SYNTH_ITEMS)
    return {
        "openmtb": study_digests(cli, tmp / "openmtb", tmp / "openmtb.csv"),
        f"synth{SYNTH_ITEMS}": study_digests(cli, tmp / "synth", tmp / "synth.csv"),
    }


@pytest.mark.slow
def test_outputs_byte_identical_to_before_the_rewrite(cli, tmp_path):
    pinned = json.loads(DIGESTS.read_text(encoding="utf-8"))
    got = all_digests(cli, tmp_path)
    diffs = [
        f"{study}/{name}"
        for study in pinned
        for name in pinned[study]
        if got.get(study, {}).get(name) != pinned[study][name]
    ]
    assert not diffs, f"outputs changed: {diffs}"
    assert set(got) == set(pinned) and all(set(got[k]) == set(pinned[k]) for k in got)


def test_synthetic_table_has_what_the_pin_needs(tmp_path):
    """The synthetic study exercises held-out values, aliases and blanks (else the pin is weak)."""
    write_synth_table(tmp_path / "t.csv", SYNTH_ITEMS)
    text = (tmp_path / "t.csv").read_text(encoding="utf-8")
    for needle in ("Probably fine", "Insufficient Info,", " supported ", ",\n", "Unsafe"):
        assert needle in text, needle


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        raise SystemExit("usage: python tests/test_scale_identity.py --regenerate")
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import invoke_cli

    with tempfile.TemporaryDirectory(prefix="gb-scale-pin-") as d:
        digests = all_digests(invoke_cli, Path(d))
    DIGESTS.parent.mkdir(parents=True, exist_ok=True)
    DIGESTS.write_text(json.dumps(digests, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {DIGESTS}")
