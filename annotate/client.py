"""A Label Studio connection for a study, with one-line errors and no token leaks.

Where the URL and token come from (first match wins):

1. explicit ``url=`` / ``token=`` arguments (tests, scripts);
2. a study with a server URL (``goldboard study init --url URL``): the token comes
   from ``$LABEL_STUDIO_API_KEY``, else from the user config file
   ``~/.config/goldboard/credentials.toml`` (``$XDG_CONFIG_HOME`` honoured, mode 0600)::

       ["https://labelstudio.example.org"]
       token = "..."

   else, when that URL is the embedded server's, from its credentials file;
3. a study without URL: the embedded server (``goldboard server start``) of the
   study's data dir, else ``$GOLDBOARD_SERVER_DIR``, else ``~/.goldboard/server``;
   its admin token is read from the 0600 credentials file.

The token never appears in a message, a repr or a file goldboard writes.
Imports are sent with ``max_retries=0`` (a retried POST duplicates tasks);
reads retry once.  Errors are :class:`goldboard.errors.LabelStudioError`
subclasses with one-line messages.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]

from goldboard.errors import GoldboardError, LabelStudioError, ParamError

if TYPE_CHECKING:  # only for the annotations
    from goldboard.study import Study

DEFAULT_TIMEOUT = 300.0
#: an export sends its first byte only when the whole project is serialised: minutes for a
#: big project on a busy server
EXPORT_TIMEOUT = 1800.0
READ_RETRIES = {"max_retries": 1}
NO_RETRIES = {"max_retries": 0}


class ServerUnreachable(LabelStudioError):
    """No answer from the server (not running, wrong URL, died mid-request)."""


class AuthenticationFailed(LabelStudioError):
    """The server refused the API token (HTTP 401/403)."""


class ProjectNotFound(LabelStudioError):
    """A project recorded in the study no longer exists on the server."""

    def __init__(self, message: str, project_id: int | None = None) -> None:
        super().__init__(message)
        self.project_id = project_id


class ProjectGone(ParamError, ProjectNotFound):
    """:class:`ProjectNotFound` whose sentence names parameters (a hint to push to a new round)."""

    def __init__(self, template: str, /, project_id: int | None = None, **values: Any) -> None:
        ParamError.__init__(self, template, **values)
        self.project_id = project_id


class ConfigMismatch(LabelStudioError):
    """A project's label config on the server no longer matches the study's schema."""


class ConfigChanged(ParamError, ConfigMismatch):
    """:class:`ConfigMismatch` whose sentence names parameters (a hint to push to a new round)."""


class ServerError(LabelStudioError):
    """The server answered with an unexpected error."""


#: project settings of every project goldboard creates: the quietest labeling page Label Studio
#: allows -- no instructions pop-up before each task (the page shows them), no skip button (a
#: skipped task would look like a missing rating), no annotation history, no predictions or
#: collaborators' predictions, no empty submissions
QUIET_PROJECT: dict[str, Any] = {
    "show_instruction": False,
    "show_skip_button": False,
    "show_annotation_history": False,
    "show_collab_predictions": False,
    "show_ground_truth_first": False,
    "show_overlap_first": False,
    "evaluate_predictions_automatically": False,
    "reveal_preannotations_interactively": False,
    "enable_empty_annotation": False,
}


# --------------------------------------------------------------------------- where the token comes from


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "goldboard" / "credentials.toml"


def _norm_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if url and "://" not in url:
        url = "http://" + url
    return url


def _token_from_config(url: str) -> tuple[str, Path] | None:
    path = user_config_path()
    if not path.exists():
        return None
    if os.name == "posix":
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise GoldboardError(f"{path}: readable by other users (mode {mode:o}); run `chmod 600 {path}`")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GoldboardError(f"{path}: invalid TOML ({type(exc).__name__})") from None
    for key, val in data.items():
        if isinstance(val, dict) and _norm_url(key) == url and val.get("token"):
            return str(val["token"]), path
    return None


@dataclass
class Connection:
    """Where the server is and which token we use.  ``repr`` hides the token."""

    url: str
    token: str = field(repr=False)
    source: str = ""
    data_dir: Path | None = None  # the embedded server's data dir, when it is one
    credentials: Any = field(default=None, repr=False)  # embedded: server.Credentials
    workers: int = 1  # requests the server handles at once, as far as goldboard knows (embedded: --workers)

    @property
    def embedded(self) -> bool:
        return self.credentials is not None


def resolve_connection(
    study: Study | None = None, *, url: str | None = None, token: str | None = None, data_dir: str | Path | None = None
) -> Connection:
    """Find the server URL and API token for ``study`` (see the module doc for the order)."""
    from goldboard.annotate import server as srv  # lazy: the server module (tomli_w) only when needed

    url = _norm_url(url if url is not None else (getattr(study, "url", "") or ""))
    ddir = data_dir or (getattr(study, "data_dir", "") or None)
    if url:

        def given(tok: str, source: str) -> Connection:
            # the admin token of the embedded server running at that URL: still the embedded server
            # (its credentials route project calls through each person's organization)
            st = srv.server_status(ddir)
            if st.running and _norm_url(st.url) == url:
                with contextlib.suppress(GoldboardError):
                    creds = srv.read_credentials(st.data_dir)
                    if creds.admin.token == tok:
                        return Connection(url, tok, source, st.data_dir, creds)
            return Connection(url, tok, source)

        if token:
            return given(token, "token argument")
        env = os.environ.get("LABEL_STUDIO_API_KEY", "").strip()
        if env:
            return given(env, "LABEL_STUDIO_API_KEY")
        found = _token_from_config(url)
        if found:
            return given(found[0], f"config file {found[1]}")
        st = srv.server_status(ddir)
        if st.running and _norm_url(st.url) == url:
            creds = srv.read_credentials(st.data_dir)
            return Connection(
                url, creds.admin.token, f"embedded server credentials {creds.path}", st.data_dir, creds, st.workers
            )
        raise AuthenticationFailed(
            f"no API token for {url}: set LABEL_STUDIO_API_KEY or add it to "
            f'{user_config_path()} as ["{url}"] token = "..."'
        )
    st = srv.server_status(ddir)
    if not st.running:
        where = getattr(study, "path", None)
        elsewhere = (
            f"; if this study's server keeps its data elsewhere, record that folder with "
            f"`goldboard study set {where} --data-dir DIR`"
            if where is not None
            else ""
        )
        raise ServerUnreachable(
            f"the embedded Label Studio server ({st.data_dir}) is not running: start it with "
            f"`goldboard server start --data-dir {st.data_dir}`{elsewhere} (or give the study a URL: "
            f"`goldboard study set {where or 'DIR'} --url URL`)"
        )
    creds = srv.read_credentials(st.data_dir)
    return Connection(
        st.url, token or creds.admin.token, f"embedded server credentials {creds.path}", st.data_dir, creds, st.workers
    )


def connect(
    study: Study | None = None,
    *,
    url: str | None = None,
    token: str | None = None,
    data_dir: str | Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    check: bool = True,
) -> Client:
    """A :class:`Client` for ``study``; with ``check`` it verifies the server answers and
    accepts the token (one request), so a wrong token fails before any work starts."""
    client = Client(resolve_connection(study, url=url, token=token, data_dir=data_dir), timeout=timeout)
    if check:
        client.whoami()
    return client


def jobs_for(client: Any, jobs: int | None, tasks: int) -> int:
    """How many of ``tasks`` (projects) to run at once: ``jobs`` when given, else the server's app
    workers as far as goldboard knows them (the embedded server's ``--workers``; 1 when unknown)."""
    if jobs is not None and jobs < 1:
        raise ParamError("{jobs} {n}: give 1 or more", n=jobs)
    if jobs is None:
        try:
            jobs = int(getattr(getattr(client, "conn", None), "workers", 1) or 1)
        except (TypeError, ValueError):
            jobs = 1
    return max(1, min(jobs, tasks))


# --------------------------------------------------------------------------- the client


class Client:
    """Thin wrapper over the SDK's ``LabelStudio`` that translates failures into
    one-line :class:`LabelStudioError` messages.  ``sdk`` is the SDK client."""

    def __init__(self, conn: Connection, timeout: float = DEFAULT_TIMEOUT) -> None:
        from label_studio_sdk import LabelStudio

        self.conn = conn
        self.url = conn.url
        self.timeout = timeout
        self.sdk = LabelStudio(base_url=conn.url, api_key=conn.token, timeout=timeout, max_retries=0)
        #: embedded server keeping people in organizations of their own: project id -> the SDK
        #: client of the account goldboard uses inside that project's organization
        self._routes: dict[int, Any] = {}
        self._org_sdks: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Client(url={self.url!r}, source={self.conn.source!r})"

    def close(self) -> None:
        """Close the HTTP connection pools."""
        for sdk in [self.sdk, *self._org_sdks.values()]:
            with contextlib.suppress(Exception):
                sdk._client_wrapper.httpx_client.httpx_client.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ organizations (embedded server)
    @property
    def routes_by_org(self) -> bool:
        """True for the admin's client of an embedded server that keeps each person in an
        organization of their own: project calls then go through the organization's account."""
        creds = self.conn.credentials
        return creds is not None and bool(getattr(creds, "orgs", None)) and self.conn.token == creds.admin.token

    def _org_sdk(self, person: str) -> Any:
        from label_studio_sdk import LabelStudio

        if person not in self._org_sdks:
            token = self.conn.credentials.org_token(person)
            if token is None:
                raise GoldboardError(f"the embedded server has no organization for {person!r}")
            self._org_sdks[person] = LabelStudio(base_url=self.url, api_key=token, timeout=self.timeout, max_retries=0)
        return self._org_sdks[person]

    def org_of_project(self, project_id: int) -> str | None:
        """Whose organization holds ``project_id`` (embedded, isolating server; None otherwise)."""
        if not self.routes_by_org:
            return None
        self._sdk(project_id)
        for person, sdk in self._org_sdks.items():
            if self._routes.get(int(project_id)) is sdk:
                return person
        return None

    def _sdk(self, project_id: int | None) -> Any:
        """The SDK client that can reach ``project_id`` (the admin's, unless it lives in a
        person's organization on an isolating embedded server)."""
        if project_id is None or not self.routes_by_org:
            return self.sdk
        pid = int(project_id)
        if pid not in self._routes:
            for person, org in self.conn.credentials.orgs.items():
                if org.id is None:
                    continue
                sdk = self._org_sdk(person)
                with self._call(f"listing the projects of {person}'s organization"):
                    for p in sdk.projects.list(page_size=1000, request_options=READ_RETRIES):
                        self._routes[int(p.id)] = sdk
                if pid in self._routes:
                    break
            else:
                self._route_by_id(pid)
            self._routes.setdefault(pid, self.sdk)
        return self._routes[pid]

    def _route_by_id(self, pid: int) -> None:
        """Ask each person's organization for project ``pid`` by id; route it to the one that answers.

        While projects are being created in the same organization (a ``push`` running alongside
        a ``pull``), Label Studio's project listing can leave out an existing project: seen live
        on one complete page (``count`` one short, the oldest project missing), and pages of at
        most 100, newest first, shift under a concurrent create.  Only an organization that
        answers 404 for the id itself has no such project; when none has it, the project is
        routed to the admin, whose 404 then says it no longer exists."""
        from label_studio_sdk.core.api_error import ApiError

        for person, org in self.conn.credentials.orgs.items():
            if org.id is None:
                continue
            sdk = self._org_sdk(person)
            with self._call(f"looking for project {pid} in {person}'s organization"):
                try:
                    sdk.projects.get(pid, request_options=READ_RETRIES)
                except ApiError as exc:
                    if exc.status_code == 404:
                        continue
                    raise
            self._routes[pid] = sdk
            return

    def as_token(self, token: str, source: str = "rater token") -> Client:
        """The same server, another user (e.g. a rater posting their own annotations)."""
        return Client(
            Connection(self.url, token, source, self.conn.data_dir, self.conn.credentials, self.conn.workers),
            self.timeout,
        )

    # ------------------------------------------------------------------ error translation
    def _scrub(self, text: str) -> str:
        creds = self.conn.credentials
        for tok in [self.conn.token, *(creds.secrets() if creds is not None else [])]:
            if tok:
                text = text.replace(tok, "***")
        return text

    @contextlib.contextmanager
    def _call(self, action: str, project: int | None = None, timeout: float | None = None) -> Iterator[None]:
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        try:
            yield
        except ApiError as exc:
            code = exc.status_code
            if code in (401, 403):
                detail = _detail(exc.body)
                raise AuthenticationFailed(
                    self._scrub(
                        f"Label Studio at {self.url} refused the API token from {self.conn.source} while {action} "
                        f"(HTTP {code}{': ' + detail if detail else ''})"
                    )
                ) from None
            if code == 404 and project is not None:
                raise ProjectNotFound(
                    f"project {project} no longer exists on {self.url} (deleted?) -- found while {action}", project
                ) from None
            if 200 <= code < 300:  # the SDK could not read a 2xx answer: not JSON, or cut short
                raise _not_json(self.url, action) from None
            raise ServerError(
                self._scrub(
                    f"Label Studio at {self.url} answered HTTP {code} while {action}: {_detail(exc.body)[:300]}"
                )
            ) from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _not_json(self.url, action) from None
        except httpx.TimeoutException:
            raise ServerUnreachable(
                f"Label Studio at {self.url} did not answer within {timeout or self.timeout:.0f} s while {action}"
            ) from None
        except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise ServerUnreachable(
                f"cannot reach Label Studio at {self.url} while {action} ({type(exc).__name__}); is the server running?"
            ) from None
        except httpx.HTTPError as exc:
            raise ServerUnreachable(
                self._scrub(f"Label Studio at {self.url}: {type(exc).__name__} while {action}")
            ) from None

    # ------------------------------------------------------------------ calls
    def whoami(self) -> dict:
        with self._call("checking the API token"):
            u = self.sdk.users.whoami(request_options=READ_RETRIES)
        return {"id": u.id, "email": u.email, "username": u.username}

    def version(self) -> dict:
        with self._call("reading the server version"):
            v = self.sdk.versions.get(request_options=READ_RETRIES)
        return v.model_dump() if hasattr(v, "model_dump") else dict(v)

    def users(self) -> list[dict]:
        with self._call("listing users"):
            users = self.sdk.users.list(request_options=READ_RETRIES)
        return [{"id": u.id, "email": u.email or "", "username": u.username or ""} for u in users]

    def project(self, project_id: int) -> dict:
        """``{"id", "title", "label_config", "task_number"}`` of a project (ProjectNotFound if gone)."""
        with self._call(f"reading project {project_id}", project_id):
            p = self._sdk(project_id).projects.get(project_id, request_options=READ_RETRIES)
        return {
            "id": p.id,
            "title": p.title or "",
            "label_config": p.label_config or "",
            "task_number": getattr(p, "task_number", None),
            "description": p.description or "",
        }

    def create_project(
        self,
        title: str,
        label_config: str,
        description: str = "",
        *,
        maximum_annotations: int = 1,
        instructions_html: str = "",
        org: str | None = None,
    ) -> int:
        """Create a project (never retried: a retried POST could create two).  ``org``: on an
        isolating embedded server, the person whose organization holds it (only they see it)."""
        kwargs: dict[str, Any] = dict(QUIET_PROJECT)
        if instructions_html:
            # kept behind the page's instructions button; the labeling page shows them itself
            kwargs.update(expert_instruction=instructions_html)
        sdk = self._org_sdk(org) if org is not None and self.routes_by_org else self.sdk
        with self._call(f"creating project {title!r}"):
            p = sdk.projects.create(
                title=title,
                label_config=label_config,
                description=description,
                maximum_annotations=maximum_annotations,
                request_options=NO_RETRIES,
                **kwargs,
            )
        self._routes[int(p.id)] = sdk
        return int(p.id)

    def find_projects(self, title: str, org: str | None = None) -> list[dict]:
        """The projects titled exactly ``title`` (``{"id", "title", "description", "task_number"}``), in
        ``org``'s organization as :meth:`create_project` puts them: a project whose creation answer
        was lost is found again by its title."""
        sdk = self._org_sdk(org) if org is not None and self.routes_by_org else self.sdk
        with self._call(f"looking for project {title!r}"):
            found = [p for p in sdk.projects.list(title=title, request_options=READ_RETRIES) if p.title == title]
        out = []
        for p in found:
            self._routes[int(p.id)] = sdk
            out.append(
                {
                    "id": int(p.id),
                    "title": p.title,
                    "description": p.description or "",
                    "task_number": getattr(p, "task_number", None),
                }
            )
        return out

    def delete_project(self, project_id: int) -> None:
        with self._call(f"deleting project {project_id}", project_id):
            self._sdk(project_id).projects.delete(project_id, request_options=NO_RETRIES)

    def validate_label_config(self, project_id: int, label_config: str) -> None:
        """Ask the server to validate ``label_config`` for a project (raises ServerError with its message)."""
        with self._call(f"validating a label config on project {project_id}", project_id):
            self._sdk(project_id).projects.validate_label_config(
                project_id, label_config=label_config, request_options=NO_RETRIES
            )

    def import_tasks(self, project_id: int, tasks: list[dict]) -> int:
        """Import ``tasks`` in ONE request, never retried.  Returns the number created."""
        with self._call(f"importing {len(tasks)} tasks into project {project_id}", project_id):
            r = self._sdk(project_id).projects.import_tasks(
                project_id, request=tasks, return_task_ids=False, request_options=NO_RETRIES
            )
        n = getattr(r, "task_count", None)
        return int(n) if n is not None else len(tasks)

    def iter_tasks(self, project_id: int, params: dict[str, Any], what: str, page_size: int = 1000) -> Iterator[dict]:
        """Every task of a project as ``GET /api/tasks/`` returns it, page by page (``params``
        picks the fields, e.g. ``{"include": "id,data"}``); ``what`` names the call in errors."""
        seen = 0
        with self._call(f"{what} of project {project_id}", project_id):
            page = 1
            while True:
                r = self._sdk(project_id)._client_wrapper.httpx_client.request(
                    "api/tasks/",
                    method="GET",
                    request_options=READ_RETRIES,
                    params={"project": project_id, "page": page, "page_size": page_size, **params},
                )
                if r.status_code == 404 and page > 1:
                    break  # past the last page
                _raise_for(r)
                try:
                    body = r.json()
                except ValueError:
                    raise _not_json(self.url, f"{what} of project {project_id} (GET api/tasks/, page {page})") from None
                tasks = body.get("tasks", []) if isinstance(body, dict) else body
                yield from tasks
                seen += len(tasks)
                total = body.get("total") if isinstance(body, dict) else None
                if not tasks or len(tasks) < page_size or (total is not None and seen >= int(total)):
                    break
                page += 1

    def task_data(self, project_id: int, page_size: int = 1000) -> list[tuple[int, dict]]:
        """``(task id, task data)`` of every task in a project (paged, ``include=id,data``)."""
        tasks = self.iter_tasks(project_id, {"include": "id,data"}, "listing the tasks", page_size)
        return [(int(t["id"]), t.get("data") or {}) for t in tasks]

    def export(self, project_id: int, export_type: str = "JSON", each: Callable[[Any], Any] | None = None) -> list:
        """Every task of a project with its annotations, via the export API (one request).

        The export is spooled to a temporary file and read back one task at a time; ``each``
        (e.g. keep only the fields a pull reads) is applied to every task as it is read, so
        memory holds ``each``'s results rather than the whole export."""
        import tempfile

        with tempfile.TemporaryFile() as fh:
            with self._call(f"exporting project {project_id}", project_id, max(self.timeout, EXPORT_TIMEOUT)):
                chunks = self._sdk(project_id).projects.exports.download_sync(
                    project_id,
                    export_type=export_type,
                    download_all_tasks=True,
                    download_resources=False,
                    request_options={
                        "max_retries": 1,
                        "timeout": max(self.timeout, EXPORT_TIMEOUT),
                        "chunk_size": 1 << 20,
                    },
                )
                for chunk in chunks:
                    fh.write(chunk)
            fh.seek(0)
            try:
                return read_json_array(fh, each)
            except ValueError:
                raise ServerError(
                    f"Label Studio at {self.url} sent an export of project {project_id} that is not a JSON list of tasks"
                ) from None

    def export_from_database(self, project_id: int, each: Callable[[Any], Any] | None = None) -> tuple[list, str]:
        """Every task of a project with its annotations, read from the embedded server's SQLite
        database (read only) in the shape of the export: for a project Label Studio cannot export
        (a text holding half an emoji makes every export and task read fail with HTTP 500).
        ``(tasks, the database file)``; a server that is not embedded on SQLite is a one-line error."""
        from goldboard.annotate import serverdb

        ddir = self.conn.data_dir
        db = Path(ddir) / "ls" / "label_studio.sqlite3" if ddir else None
        if db is None or not db.exists() or serverdb.read_settings(Path(ddir)).database is not None:
            raise ServerError(
                f"Label Studio at {self.url} cannot export project {project_id}: a text in it holds half an emoji "
                f"(a lone surrogate), which its export cannot write; ask the server's administrator to correct "
                f"that annotation (its database, or the rater re-typing it), then pull again"
            )
        return [each(t) if each is not None else t for t in _sqlite_tasks(db, project_id)], str(db)

    def create_annotation(
        self, task_id: int, result: list[dict], lead_time: float | None = None, was_cancelled: bool = False
    ) -> int:
        """Post one annotation as the token's user (never retried)."""
        kwargs: dict[str, Any] = {"result": result, "was_cancelled": was_cancelled, "ground_truth": False}
        if lead_time is not None:
            kwargs["lead_time"] = lead_time
        with self._call(f"posting an annotation to task {task_id}"):
            a = self.sdk.annotations.create(task_id, request_options=NO_RETRIES, **kwargs)
        return int(a.id)

    def delete_annotation(self, annotation_id: int) -> None:
        with self._call(f"deleting annotation {annotation_id}"):
            self.sdk.annotations.delete(annotation_id, request_options=NO_RETRIES)

    def update_task_data(self, project_id: int, task_id: int, data: dict) -> None:
        """Replace one task's data (one request, never retried; its annotations stay)."""
        with self._call(f"updating task {task_id} of project {project_id}", project_id):
            self._sdk(project_id).tasks.update(str(task_id), data=data, request_options=NO_RETRIES)

    def update_project_config(self, project_id: int, label_config: str) -> None:
        with self._call(f"updating the label config of project {project_id}", project_id):
            self._sdk(project_id).projects.update(project_id, label_config=label_config, request_options=NO_RETRIES)


def _sqlite_time(value: Any) -> Any:
    """Django's SQLite datetime text (UTC, ``2026-01-01 10:00:00.123456``) as the export writes it."""
    if not isinstance(value, str) or not value:
        return value
    text = value.replace(" ", "T", 1)
    return text if text.endswith("Z") or "+" in text[10:] else text + "Z"


def _sqlite_tasks(db: Path, project_id: int) -> list[dict]:
    """The tasks of ``project_id`` with their annotations, from Label Studio's SQLite file (read only)."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        tasks = {
            tid: {"id": tid, "project": project_id, "data": json.loads(data) if data else None, "annotations": []}
            for tid, data in con.execute("SELECT id, data FROM task WHERE project_id = ? ORDER BY id", (project_id,))
        }
        rows = con.execute(
            "SELECT id, task_id, completed_by_id, result, was_cancelled, lead_time, created_at, updated_at "
            "FROM task_completion WHERE project_id = ? ORDER BY id",
            (project_id,),
        )
        for aid, tid, who, result, cancelled, lead, created, updated in rows:
            if tid in tasks:
                tasks[tid]["annotations"].append(
                    {
                        "id": aid,
                        "completed_by": who,
                        "result": json.loads(result) if result else [],
                        "was_cancelled": bool(cancelled),
                        "lead_time": lead,
                        "created_at": _sqlite_time(created),
                        "updated_at": _sqlite_time(updated),
                    }
                )
    except (sqlite3.Error, ValueError) as exc:
        raise ServerError(f"{db}: cannot read project {project_id} from Label Studio's database ({exc})") from None
    finally:
        con.close()
    return list(tasks.values())


def read_json_array(fh: Any, each: Callable[[Any], Any] | None = None) -> list:
    """The items of the JSON array in binary file ``fh``, each passed through ``each`` as it is
    read (streamed with ijson when installed, so the whole document is never in memory at once).
    Raises ValueError when ``fh`` is not a JSON array."""
    head = fh.read(64).lstrip()
    if not head.startswith(b"["):
        raise ValueError("not a JSON array")
    fh.seek(0)
    try:
        import ijson
    except ImportError:  # pragma: no cover - ijson comes with goldboard
        ijson = None
    if ijson is None or _lone_surrogate_escape(fh):
        # ijson turns half an emoji (a lone surrogate escape) into "?" without a word: json keeps it
        try:
            data = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise ValueError(str(exc)) from None
        if not isinstance(data, list):
            raise ValueError("not a JSON array")
        return [each(x) for x in data] if each is not None else data
    try:
        return [each(x) if each is not None else x for x in ijson.items(fh, "item", use_float=True)]
    except ijson.JSONError as exc:
        raise ValueError(str(exc)) from None


#: a lone surrogate escape in JSON text: a high half not followed by a low one, or a low half alone
_LONE_SURROGATE_ESCAPE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _lone_surrogate_escape(fh: Any, chunk: int = 1 << 20) -> bool:
    """Whether binary JSON file ``fh`` holds a lone surrogate escape (``\\ud83d``: half an emoji),
    read in chunks that overlap by 18 bytes (a match near a chunk's edge is decided with the next
    chunk); ``fh`` is left at its start."""
    chunk = max(chunk, 64)
    buf, at_start = b"", True
    try:
        while True:
            block = fh.read(chunk)
            text = buf + block
            for m in _LONE_SURROGATE_ESCAPE.finditer(text):
                if (m.start() >= 6 or at_start) and (m.end() <= len(text) - 6 or not block):
                    return True
            if not block:
                return False
            if len(text) > 18:
                buf, at_start = text[-18:], False
            else:
                buf = text
    finally:
        fh.seek(0)


def _not_json(url: str, action: str) -> ServerError:
    """A 2xx answer that is not whole JSON (a proxy or a worker cut it short): one line naming the call."""
    return ServerError(
        f"Label Studio at {url} sent an answer that is not valid JSON (cut short?) while {action}: run the "
        f"command again, and if it recurs check the server's log (or a proxy in front of it)"
    )


def _detail(body: Any) -> str:
    if isinstance(body, dict):
        for k in ("detail", "validation_errors", "message", "error"):
            if body.get(k):
                return " ".join(str(body[k]).split())
        return " ".join(json.dumps(body)[:300].split())
    return " ".join(str(body or "").split())[:300]


def _raise_for(r: Any) -> None:
    from label_studio_sdk.core.api_error import ApiError

    if r.status_code >= 400:
        try:
            body = r.json()
        except ValueError:
            body = r.text[:300]
        raise ApiError(status_code=r.status_code, headers=dict(r.headers), body=body)


__all__ = [
    "Connection",
    "Client",
    "resolve_connection",
    "connect",
    "jobs_for",
    "user_config_path",
    "ServerUnreachable",
    "AuthenticationFailed",
    "ProjectNotFound",
    "ConfigMismatch",
    "ServerError",
]
