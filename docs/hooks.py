"""MkDocs hook: a placeholder for each manual page another branch writes, while it is absent.

The nav names every page of the manual; a few are written alongside other work (the judge, the
intervals, planning, other tools, the intake, safety, the report's sentences). Until such a page is
in the tree, the build gets a generated one-line page in its place (nothing is written to
``docs/``), so ``mkdocs build --strict`` still checks the nav and every link and anchor to the
others. A page that exists is used as it is.
"""

from __future__ import annotations

from mkdocs.structure.files import File

#: every page the nav names is now in the tree (judge, planning, other tools, intake, safety were
#: written beside other work): none is given a placeholder, and every page's ``console`` blocks are run
#: by tests/test_docs.py. A page a branch adds to the nav before writing it goes here meanwhile.
OWNED_ELSEWHERE: tuple[str, ...] = ()


def on_files(files, config):
    """Add a generated placeholder for each page of ``OWNED_ELSEWHERE`` the docs folder lacks."""
    for name in OWNED_ELSEWHERE:
        if files.get_file_from_path(name) is None:
            title = name.removesuffix(".md").replace("-", " ").capitalize()
            files.append(File.generated(config, name, content=f"# {title}\n\nThis page is not written yet.\n"))
    return files
