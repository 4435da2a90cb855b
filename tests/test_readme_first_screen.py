"""A newcomer finds, on the README's first screen (40 lines), how to run the demo and where the steps
of their own study and the install without ``make`` are; the links are checked by
tests/test_docs_links.py."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
SCREEN = 40


def first_screen_gaps(text: str) -> list[str]:
    screen = "\n".join(text.splitlines()[:SCREEN])
    wanted = {
        "the demo command": r"^make demo\b",
        "a link to the own-study steps": r"\]\(#your-own-study[\w-]*\)",
        "a link to the install section": r"\]\(#install\)",
        "a link to the manual": r"\]\(docs/index\.md\)",
    }
    return [what for what, pattern in wanted.items() if not re.search(pattern, screen, flags=re.M)]


def test_the_first_screen_has_the_demo_and_the_way_to_ones_own_study():
    assert first_screen_gaps(README.read_text(encoding="utf-8")) == []


def test_a_first_screen_without_them_is_caught():
    text = README.read_text(encoding="utf-8")
    pushed_down = "\n" * SCREEN + text
    assert len(first_screen_gaps(pushed_down)) == 4
