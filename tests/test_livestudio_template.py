"""The migrated Label Studio template in pytest's cache is built once, also when pytest-xdist
workers ask for it at the same time (``livestudio.cached_template``): one migrates, the others
wait for it and use its copy."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import livestudio

from goldboard.annotate import server as srv


class _Cache:
    """pytest's ``config.cache``, as far as ``cached_template`` uses it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mkdir(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path


def test_workers_asking_at_once_build_the_template_once(tmp_path, monkeypatch):
    builds: list[Path] = []
    lock = threading.Lock()

    def make_template(path: Path, raters, blinding) -> Path:
        with lock:
            builds.append(path)
        time.sleep(0.5)  # a migration takes a while: the other worker asks meanwhile
        (path / "ls").mkdir(parents=True)
        (path / "ls" / "label_studio.sqlite3").write_text("db")
        (path / srv.CREDENTIALS_FILE).write_text("admin")
        return path

    monkeypatch.delenv("GOLDBOARD_TEST_FRESH_LS", raising=False)
    monkeypatch.setattr(livestudio, "make_template", make_template)
    monkeypatch.setattr(livestudio, "template_key", lambda *a, **k: "ls-template-test")
    cache = _Cache(tmp_path / "cache")
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda i: livestudio.cached_template(cache, tmp_path / f"worker{i}"), range(3)))
    assert len(builds) == 1, builds
    assert got == [cache.root / "ls-template-test" / "server"] * 3
    assert (got[0] / "ls" / "label_studio.sqlite3").read_text() == "db"
