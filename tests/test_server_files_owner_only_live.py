"""Every file the embedded server's data dir holds is owner-only, the ones Label Studio writes itself too.

The README ("Permissions") says the data dir is 0700 and its files 0600.  goldboard's own files are
written 0600; Label Studio saves uploads and export snapshots through Django's storage, which chmods
them to ``FILE_UPLOAD_PERMISSIONS`` (0644 by default, whatever the umask): goldboard's settings set it
to 0600 (folders 0700).  Here Label Studio writes an uploaded task file and an export snapshot, and
every file and folder of the data dir is checked, ``server.toml`` and ``server.json`` included."""

from __future__ import annotations

import stat

import httpx
import pytest

from goldboard.annotate import server as srv

pytestmark = pytest.mark.live

CONFIG = '<View><Text name="t" value="$text"/><Choices name="c" toName="t"><Choice value="A"/></Choices></View>'


def _modes(root):
    return {p: stat.S_IMODE(p.lstat().st_mode) for p in [root, *root.rglob("*")] if not p.is_symlink()}


def test_files_label_studio_saves_are_owner_only(fresh_server):
    creds = srv.read_credentials(fresh_server.data_dir)
    with httpx.Client(
        base_url=fresh_server.url, headers={"Authorization": f"Token {creds.admin.token}"}, timeout=60
    ) as http:
        r = http.post("/api/projects/", json={"title": "perm", "label_config": CONFIG})
        assert r.status_code == 201, r.text
        pid = r.json()["id"]
        files = {"file": ("tasks.json", b'[{"text": "one"}, {"text": "two"}]', "application/json")}
        r = http.post(f"/api/projects/{pid}/import", files=files)  # saved under media/upload by Label Studio
        assert r.status_code == 201, r.text
        r = http.post(f"/api/projects/{pid}/exports/", json={"title": "snapshot"})  # saved under export/
        assert r.status_code == 201, r.text
        eid = r.json()["id"]
        r = http.get(f"/api/projects/{pid}/exports/{eid}/download", params={"exportType": "JSON"})
        assert r.status_code == 200 and b"one" in r.content, r.text[:300]
    modes = _modes(fresh_server.data_dir)
    saved = [p for p in modes if p.is_file() and {"upload", "export"} & set(p.relative_to(fresh_server.data_dir).parts)]
    assert any("upload" in p.parts for p in saved) and any("export" in p.parts for p in saved), sorted(modes)
    for name in (srv.PID_FILE, "server.toml"):
        assert fresh_server.data_dir / name in modes, name
    loose = {str(p): oct(m) for p, m in modes.items() if m != (0o700 if p.is_dir() else 0o600)}
    assert not loose, loose
