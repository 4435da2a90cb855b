"""Every internal link of the README and of the manual resolves: the file exists and the anchor is a
heading (or an explicit ``{ #id }``) of that file.

Offline and cheap (no MkDocs, no network): it runs in ``make test-fast``, where the manual's build
(``mkdocs build --strict``, which checks the manual's own links too) does not. The README's anchors
are GitHub's (that is where it is read), the manual's MkDocs' (``toc``'s slugs). External ``http``
links are not fetched.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*$", re.M)
EXPLICIT_ID = re.compile(r"\{[^}]*#([\w-]+)[^}]*\}")


def github_slug(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def toc_slug(title: str) -> str:
    """Python-Markdown's ``toc`` slugify (what MkDocs uses)."""
    value = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def _prose(text: str) -> str:
    """The text without its code blocks and inline code (a ``](x)`` in code is not a link)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(path: Path, slug) -> set[str]:
    """Every anchor a page has: its headings' slugs (a repeated one also as ``-1``, ``-2`` ...) and
    its explicit ``{ #id }`` attributes."""
    found: set[str] = set()
    for title in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        found |= set(EXPLICIT_ID.findall(title))
        title = EXPLICIT_ID.sub("", title)
        base = slug(title.replace("`", ""))
        name, n = base, 0
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def broken_links(page: Path) -> list[str]:
    """``"target: why"`` for each internal link of ``page`` that does not resolve."""
    slug = github_slug if page == README else toc_slug
    broken = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest, slug):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    return broken


PAGES = [README, *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_internal_link_resolves(page):
    assert broken_links(page) == []


def test_the_pages_have_links_to_check():
    """A pattern that found no link would pass every page."""
    assert sum(len(LINK.findall(_prose(p.read_text(encoding="utf-8")))) for p in PAGES) >= 100
    assert len(LINK.findall(_prose(README.read_text(encoding="utf-8")))) >= 20


def test_a_broken_file_or_anchor_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# A page\n\n## Set-up: two `commands`\n\n## B { #b-id }\n", encoding="utf-8"
    )
    page = tmp_path / "docs" / "index.md"
    page.write_text(
        "[ok](a.md#set-up-two-commands) [ok](a.md#b-id) [ok](#here)\n\n## Here\n\n"
        "[bad](a.md#nowhere) [bad](missing.md) `[code](not-a-link.md)`\n",
        encoding="utf-8",
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert broken_links(page) == [
            "a.md#nowhere: no heading #nowhere in docs/a.md",
            "missing.md: no file docs/missing.md",
        ]
    finally:
        ROOT = saved


def test_the_slugs_are_githubs_and_mkdocs():
    assert github_slug("Your own study: two oncologists, ten steps") == "your-own-study-two-oncologists-ten-steps"
    assert github_slug("Try it on published data (one minute, no server)") == (
        "try-it-on-published-data-one-minute-no-server"
    )
    assert github_slug("A - B") == "a---b" and toc_slug("A - B") == "a-b"
