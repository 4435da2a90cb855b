"""The manual and the README say what goldboard does today.

- ``docs/cli.md`` is what ``docs/gen_cli.py`` writes from the click commands today (``make docs-cli``),
  and every visible command and option has an entry in it;
- every ``console`` block of the README and of the manual's pages is run, command by command, in an
  empty folder, and what it shows is what the command prints (a last line ``...`` stands for the
  lines left out);
- the ``>>>`` examples of ``docs/python-api.md`` run (doctest);
- the README is a front door (at most 250 lines) whose links into ``docs/`` resolve, and every page
  of ``docs/`` is in the manual's nav (``mkdocs build --strict`` then checks every link and anchor:
  ``make docs``, run by CI).
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import shlex
from pathlib import Path

import click
import pytest
from conftest import invoke_cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_cli = _load("gen_cli")
hooks = _load("hooks")


# --------------------------------------------------------------------------- the CLI reference


def test_the_cli_reference_is_current():
    """docs/cli.md is what the generator writes from today's commands: run `make docs-cli`."""
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == gen_cli.render(), (
        "docs/cli.md is stale: run `make docs-cli`"
    )


def _sections(page: str) -> dict[str, str]:
    """``"goldboard agree"`` -> that command's section of the page."""
    parts = re.split(r"^#{2,3} `(goldboard[^`]*)` \{ #[^}]+ \}$", page, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def undocumented(page: str) -> list[str]:
    """Every visible command without a section and every visible option of a command whose
    spelling is not in its section."""
    from goldboard.cli import main

    sections = _sections(page)
    missing = []
    for path, cmd, _ctx in gen_cli.walk(main, ("goldboard",)):
        name = " ".join(path)
        if name not in sections:
            missing.append(name)
            continue
        for param in cmd.params:
            if isinstance(param, click.Option) and not param.hidden:
                for spelling in param.opts + param.secondary_opts:
                    if not re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", sections[name]):
                        missing.append(f"{name} {spelling}")
    return missing


def test_every_command_and_option_is_documented():
    assert undocumented((DOCS / "cli.md").read_text(encoding="utf-8")) == []


def test_an_undocumented_option_or_command_is_found():
    """The check above can fail: a page without one option's line, or without one command, is caught."""
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    no_seed = re.sub(r"^\s+--seed .*$", "", page, count=1, flags=re.M)
    assert any(m.endswith(" --seed") for m in undocumented(no_seed))
    no_flag = page.replace("## `goldboard flag` { #goldboard-flag }", "## flag")
    assert "goldboard flag" in undocumented(no_flag)


# --------------------------------------------------------------------------- shown output


def console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """Each ```console block as ``[(command, shown output lines), ...]``."""
    blocks = []
    for body in re.findall(r"^```console\n(.*?)^```$", text, flags=re.M | re.S):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                assert steps, f"console block output before any command: {line!r}"
                steps[-1][1].append(line)
        blocks.append(steps)
    return blocks


def check_shown(command: str, shown: list[str], printed: str) -> None:
    """``shown`` is ``printed`` line for line; a last ``...`` line: ``shown`` is its beginning."""
    got = printed.rstrip("\n").splitlines()
    if shown and shown[-1] == "...":
        want = shown[:-1]
        assert got[: len(want)] == want, f"$ {command}\nshown:\n" + "\n".join(want) + "\nprinted:\n" + printed
        assert len(got) > len(want), f"$ {command}: '...' but nothing more is printed"
    else:
        assert got == shown, f"$ {command}\nshown:\n" + "\n".join(shown) + "\nprinted:\n" + printed


#: every page that may show a command's output (the pages written alongside other work check their own)
SHOWN = [README, *sorted(p for p in DOCS.glob("*.md") if p.name not in hooks.OWNED_ELSEWHERE)]
BLOCKS = [(page, i) for page in SHOWN for i in range(len(console_blocks(page.read_text(encoding="utf-8"))))]


def test_the_readme_and_the_manual_have_shown_output_to_check():
    blocks = console_blocks(README.read_text(encoding="utf-8"))
    assert blocks and sum(len(b) for b in blocks) >= 4
    assert len({page for page, _ in BLOCKS}) >= 2


@pytest.mark.parametrize("page,index", BLOCKS, ids=[f"{p.name}-{i}" for p, i in BLOCKS])
def test_the_shown_output_is_what_the_commands_print(page, index, tmp_path, monkeypatch):
    """Each console block, run in an empty folder, prints what it shows."""
    monkeypatch.chdir(tmp_path)
    for command, shown in console_blocks(page.read_text(encoding="utf-8"))[index]:
        argv = shlex.split(command)
        assert argv[0] == "goldboard", command
        res = invoke_cli(*argv[1:], code=0)
        check_shown(command, shown, res.output)


def test_a_changed_output_is_caught():
    with pytest.raises(AssertionError):
        check_shown("goldboard x", ["a", "b"], "a\nc\n")
    with pytest.raises(AssertionError):
        check_shown("goldboard x", ["a", "..."], "b\nc\n")
    check_shown("goldboard x", ["a", "..."], "a\nc\n")


def test_the_python_api_page_examples_run(tmp_path, monkeypatch):
    """docs/python-api.md's ``>>>`` examples, as doctest runs a text file."""
    monkeypatch.chdir(tmp_path)
    failed, attempted = doctest.testfile(str(DOCS / "python-api.md"), module_relative=False, report=True, verbose=False)
    assert attempted >= 10 and failed == 0


# --------------------------------------------------------------------------- the front door and the nav


def test_the_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    first_screen = "\n".join(text.splitlines()[:120])
    for must in ("make demo", "make test", "pip install", "[server]", "[judge]", "Your own study"):
        assert must in first_screen or must in text[: text.find("## The manual")], must


def _nav_pages() -> set[str]:
    import yaml

    def walk(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for n in node:
                yield from walk(n)
        elif isinstance(node, dict):
            for v in node.values():
                yield from walk(v)

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return set(walk(config["nav"]))


def test_every_page_is_in_the_nav_and_every_nav_page_exists_or_is_owned_elsewhere():
    pages = {p.name for p in DOCS.glob("*.md")}
    nav = _nav_pages()
    assert pages - nav == set(), "add these pages to mkdocs.yml's nav"
    assert nav - pages - set(hooks.OWNED_ELSEWHERE) == set(), "nav pages that do not exist"


def test_the_readme_links_into_the_manual_resolve():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#\s]+)", text)
    assert len(targets) >= 20
    missing = [t for t in targets if not (ROOT / t).exists() and Path(t).name not in hooks.OWNED_ELSEWHERE]
    assert missing == []


@pytest.mark.slow
def test_the_manual_builds_with_no_warning(tmp_path):
    """``mkdocs build --strict`` (what ``make docs`` and CI run), when the docs extra is installed."""
    pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]') is not installed")
    pytest.importorskip("material", reason="mkdocs-material (the docs extra) is not installed")
    import subprocess
    import sys

    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
