"""A judge run's answers as recorded, one JSON line each, in ``judges/NAME/responses.jsonl``: read
by `goldboard judge run` (what is cached) and by `goldboard judge --study` (which items the judge
was asked)."""

from __future__ import annotations

import json
from pathlib import Path


def read_responses(path: Path) -> dict[str, dict]:
    """key -> record (the last one of each key; a torn last line from a kill is skipped)."""
    out: dict[str, dict] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and "key" in rec:
            out[rec["key"]] = rec
    return out
