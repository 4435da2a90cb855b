"""Generate ``docs/cli.md``, the CLI reference, from the click commands (``make docs-cli``).

Each command and subcommand gets a section with its ``--help`` text as click prints it at a fixed
width of 100 columns, so the page is what ``goldboard COMMAND --help`` shows; hidden commands and
options (old spellings kept for one release) are left out, as in ``--help``. ``tests/test_docs.py``
fails when the page is not what this script writes today, or when a visible command or option has
no entry.

    python docs/gen_cli.py            # rewrite docs/cli.md
    python docs/gen_cli.py --check    # exit 1 when docs/cli.md is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

PAGE = Path(__file__).resolve().parent / "cli.md"
WIDTH = 100

HEADER = """# CLI reference

Every `goldboard` command and its options, as `goldboard COMMAND --help` prints them. This page
is generated from the click commands by `docs/gen_cli.py` (`make docs-cli`); `tests/test_docs.py`
fails when it is stale or a command or option is missing from it. Options kept for one release
under an old spelling are hidden from `--help` and from this page.
"""


def walk(cmd: click.Command, path: tuple[str, ...], ctx: click.Context | None = None, name: str | None = None):
    """``(path, command, context)`` for ``cmd`` and every visible subcommand, depth first, in
    the order ``--help`` lists them."""
    # the command's own context settings (the group's ``-h/--help``), as ``make_context`` applies them:
    # click caches a command's help option from the first context that asks for it, so a context
    # without them would print ``--help`` alone, or not, depending on what ran before
    settings = {**cmd.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(cmd, info_name=name or path[-1], parent=ctx, **settings)
    yield path, cmd, ctx
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            yield from walk(sub, (*path, name), ctx)
    # a command that routes a first argument to another command (``goldboard judge run``), in the
    # context that routing makes: named "judge run", under the command's parent
    for sub in getattr(cmd, "routed_commands", ()):
        yield from walk(sub, (*path, sub.name), ctx.parent, name=f"{ctx.info_name} {sub.name}")


def anchor(path: tuple[str, ...]) -> str:
    return "-".join(path)


def render() -> str:
    """The whole page as text."""
    from goldboard.cli import main

    entries = list(walk(main, ("goldboard",)))
    out = [HEADER, "## Commands", ""]
    for path, _cmd, _ctx in entries[1:]:
        depth = len(path) - 2
        out.append(f"{'    ' * depth}- [`{' '.join(path)}`](#{anchor(path)})")
    out.append("")
    for path, cmd, ctx in entries:
        title = " ".join(path)
        level = "##" if len(path) <= 2 else "###"
        out += [f"{level} `{title}` {{ #{anchor(path)} }}", "", "```text", cmd.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE}: stale; run `make docs-cli`", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
