"""The intake core on records alone: no server, no file (issue 20).

Each test builds normalised annotations (:class:`Shown` / :class:`Annotation`) by hand and reads
what :func:`collect` makes of them: attribution, validation, keep-latest, hold-out, summary.
"""

from __future__ import annotations

from goldboard.cases.intake.core import Annotation, Answer, Shown, choices_answer, collect, validate
from goldboard.label_configs.schema import load_schema

SCHEMA = load_schema("mtb")
RATERS = ["onc_a", "onc_b"]


def ann(aid, label=None, *, user=None, at="2026-01-01T10:00:00Z", why="because", extra=(), cancelled=False):
    entries = []
    if label is not None:
        entries.append(("safety_label", choices_answer(label)))
    if why is not None:
        entries.append(("rationale", Answer(text=why)))
    entries.extend(extra)
    return Annotation(entries=entries, user=user, at=at, annotation_id=aid, cancelled=cancelled, raw={"a": aid})


def shown(item, rater, *anns, check_user=False, group="g"):
    info = {"case_id": item.split("::")[0], "output_id": item, "model": "m"}
    return Shown(item, info, rater, list(anns), group=f"{group}/{rater}", check_user=check_user)


def test_validate_reads_aliases_multi_order_and_unticked_binary():
    values, problems = validate(
        [
            ("safety_label", choices_answer("insufficient info")),
            ("missing_info", choices_answer(["ecog_status", "stage"])),
            ("rationale", Answer(text="no ECOG")),
        ],
        SCHEMA,
    )
    assert problems == []
    assert values["safety_label"] == "Insufficient Information"
    assert values["missing_info"] == "stage|ecog_status"  # schema order, not the order given


def test_validate_names_every_problem_in_the_source_order():
    values, problems = validate(
        [
            (None, Answer(error="result[0] is not an object")),
            ("mood", Answer()),
            ("safety_label", choices_answer(["Supported", "Unsupported"])),
            ("safety_label", choices_answer("Supported")),
        ],
        SCHEMA,
    )
    assert problems == [
        "result[0] is not an object",
        "unknown field 'mood'",
        "safety_label: answered twice",
        "safety_label: 2 values for a single-choice field (Supported, Unsupported)",
    ]
    assert choices_answer([{"x": 1}]).error.startswith("malformed choices")
    assert validate([("safety_label", choices_answer("Zzz"))], SCHEMA)[1] == [
        "safety_label: 'Zzz' is not a value of safety_label (allowed: Supported, Partially Supported, "
        "Unsupported, Insufficient Information)"
    ]


def test_named_raters_latest_kept_invalid_and_superseded_held_out():
    res = collect(
        [
            shown("C1::m", "onc_a", ann("t:2", "Supported", why="ok")),
            shown("C1::m", "onc_b", ann(5, "Unsupported"), ann(6, "Supported", at="2026-01-02T00:00:00Z")),
            shown("C2::m", "onc_a", ann("t:3", "Zzz", why="typo")),
            shown("C2::m", "onc_b"),
        ],
        SCHEMA,
        RATERS,
        1,
    )
    r = res.ratings
    sl = r[r.field == "safety_label"]
    assert sl[["item_id", "rater", "value", "annotation_id"]].values.tolist() == [
        ["C1::m", "onc_a", "Supported", "t:2"],
        ["C1::m", "onc_b", "Supported", "6"],  # the later one
    ]
    assert r[(r.rater == "onc_a")]["rationale"].tolist() == ["ok", "ok"]
    inv = res.invalid.set_index("annotation_id")
    assert inv.loc["5", "kind"] == "superseded" and "superseded by annotation 6" in inv.loc["5", "reason"]
    assert inv.loc["t:3", "kind"] == "invalid" and "'Zzz' is not a value" in inv.loc["t:3", "reason"]
    assert inv.loc["t:3", "result"] == '{"a": "t:3"}'  # verbatim
    s = res.summary
    assert (s["valid_annotations"], s["invalid_annotations"], s["superseded_annotations"]) == (2, 1, 1)
    assert s["raters"]["onc_b"]["unannotated_items"] == ["C2::m"]
    assert s["warnings"] == []  # named raters: no "server user unknown"
    text = res.describe()
    # each item once: C2's only annotation was held out as invalid, it is not also "unannotated" (cl22)
    assert "onc_a: 1 rated, 1 invalid, 0 superseded (2 items: 1 rated + 1 invalid + 0 unannotated)" in text
    assert "held out: 1 invalid, 1 superseded annotations" in text


def test_attribution_by_account_and_a_stranger_in_a_raters_project():
    users = {2: "onc_a", 3: "onc_b"}
    res = collect(
        [
            # a shared project: by account; user 9 is nobody's
            Shown("C1::m", {}, None, [ann(1, "Supported", user=2), ann(2, "Supported", user=9)], group=1),
            # onc_b's blinded project: the account must be onc_b's
            Shown("C2::m", {}, "onc_b", [ann(3, "Unsupported", user=2)], group=2),
        ],
        SCHEMA,
        RATERS,
        1,
        user_raters=users,
        known_users={9: "admin"},
    )
    assert res.ratings[["item_id", "rater"]].drop_duplicates().values.tolist() == [["C1::m", "onc_a"]]
    reasons = dict(zip(res.invalid["annotation_id"], res.invalid["reason"]))
    assert reasons["2"] == "annotated by admin (user 9), who is not a study rater"
    assert reasons["3"] == "annotated by onc_a (user 2) in onc_b's project"
    assert res.summary["raters"]["onc_b"]["by_other_users"] == 1
    assert res.summary["unattributed_annotations"] == 1


def test_unknown_server_user_warns_in_rater_order_and_skipped_is_held_out():
    res = collect(
        [
            Shown("C1::m", {}, "onc_b", [ann(1, "Supported")], group=2, check_user=True),
            Shown("C1::m", {}, "onc_a", [ann(2, "Supported", cancelled=True)], group=1, check_user=True),
        ],
        SCHEMA,
        RATERS,
        1,
    )
    assert res.summary["warnings"] == [
        "onc_a: server user unknown, annotations attributed by project only",
        "onc_b: server user unknown, annotations attributed by project only",
    ]
    assert res.invalid["reason"].tolist() == ["skipped (cancelled) annotation"]


def test_an_unreadable_annotation_and_a_missing_item_are_held_out_whole():
    res = collect(
        [Shown("", {}, "onc_a", [Annotation(unreadable="empty result", annotation_id=1)], group=1)],
        SCHEMA,
        RATERS,
        1,
    )
    assert res.ratings.empty
    reason = res.invalid["reason"].iloc[0]
    assert reason.startswith("task has no item_id") and reason.endswith("; empty result")
