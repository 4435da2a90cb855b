"""What has been built on a round: adjudication decisions made on its ratings and gold releases
made from them (:func:`round_use`).  Every intake (a push adding items, a re-pull changing
ratings) asks it before it changes a round."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

from goldboard.adjudicate.decisions import read_decisions
from goldboard.errors import GoldboardError
from goldboard.exports.gold import list_releases, read_manifest
from goldboard.fileio import iter_jsonl
from goldboard.study import Study


@dataclass
class RoundUse:
    """What has been built on a round: adjudication decisions and gold releases."""

    decisions: int = 0
    decided_items: int = 0
    items: int = 0
    releases: list[str] = field(default_factory=list)

    def describe(self) -> str:
        parts = []
        if self.decisions:
            parts.append(
                f"{self.decisions} adjudication decision{'s' if self.decisions != 1 else ''} on "
                f"{self.decided_items} of its {self.items} items (decisions.jsonl)"
            )
        if self.releases:
            parts.append(f"gold release{'s' if len(self.releases) != 1 else ''} {', '.join(self.releases)}")
        return " and ".join(parts)


def round_use(study: Study, round_number: int, items: set[str] | None = None) -> RoundUse:
    """Decisions made on the round (a decision records the round it was made on; an older
    entry without one counts when it is about one of the round's items and was logged after
    the round was created), and the gold releases whose gold rows come from the round
    (older releases: that list the round's ratings file among their sources)."""
    if items is None:
        items = round_items(study, round_number)
    rnd = next((r for r in study.rounds if r.number == round_number), None)
    since = _when(rnd.created_at) if rnd is not None else None
    use = RoundUse(items=len(items))
    decided = set()
    for e in read_decisions(study.decisions_path):
        if str(e.get("item_id")) not in items:
            continue
        made_on = e.get("round")
        if isinstance(made_on, int) and not isinstance(made_on, bool):
            if made_on != round_number:
                continue  # decided on another round's ratings
        else:
            at = _when(str(e.get("timestamp") or ""))
            if since is not None and at is not None and at < since:
                continue  # decided before this round existed
        use.decisions += 1
        decided.add(str(e["item_id"]))
    use.decided_items = len(decided)
    source = f"rounds/{round_number}/ratings.csv"
    for _, path in list_releases(study.gold_dir):
        man = read_manifest(path)
        rounds = man.get("rounds")
        if isinstance(rounds, dict) and isinstance(rounds.get("items_per_round"), dict):
            used = str(round_number) in rounds["items_per_round"]
        else:
            used = any(s.get("path") == source for s in (man.get("sources") or {}).get("ratings") or [])
        if used:
            use.releases.append(path.name)
    return use


def round_items(study: Study, round_number: int) -> set[str]:
    return {
        str(rec["item_id"])
        for rec in read_units_file(study.units_path)
        if round_number in {int(r) for r in (rec.get("rounds") or [])}
    }


def _when(text: str) -> _dt.datetime | None:
    try:
        t = _dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=_dt.timezone.utc)


def read_units_file(path: Path) -> list[dict]:
    """units.jsonl's item records (none when the file is absent); a line that is not one is a located error."""
    if not path.exists():
        return []
    out = []
    for i, rec in iter_jsonl(path, " in the units file"):
        if not isinstance(rec, dict) or "item_id" not in rec:
            raise GoldboardError(f"{path}:{i}: not an item record (a JSON object with an item_id)")
        out.append(rec)
    return out


__all__ = ["RoundUse", "round_use", "round_items"]
