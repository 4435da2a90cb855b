"""Answers of a Label Studio server that are lost or cut short: a project whose creation answer
never arrived is found again by its title on the next push (no second, empty project beside it),
and a 2xx answer that is not whole JSON is one line naming the call, never exit 3.

Failed before (checked): the re-run push made a second project, the first left empty on the
server; a page of ``api/tasks/`` cut short raised json's JSONDecodeError (exit 3) and the SDK's
calls said "answered HTTP 200".
"""

from __future__ import annotations

import httpx
import pytest
from test_push_offline import FakeServer, mocked, units

from goldboard.annotate.client import ServerError, ServerUnreachable
from goldboard.annotate.push import push
from goldboard.study import Study


class _LostAnswerServer(FakeServer):
    """Creates the first project asked for, then the connection drops before the answer arrives."""

    def __init__(self):
        super().__init__()
        self.lost = False

    def create_project(self, title, label_config, description="", **kw):
        pid = super().create_project(title, label_config, description, **kw)
        if not self.lost:
            self.lost = True
            raise ServerUnreachable(f"cannot reach Label Studio at {self.url} while creating project {title!r}")
        return pid


def test_a_project_whose_creation_answer_was_lost_is_taken_on_the_next_push(tmp_path):
    study = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://fake")
    fake = _LostAnswerServer()
    with pytest.raises(ServerUnreachable):
        push(study, units=units(3), client=fake, progress=False)
    st = Study.open(study.path)
    assert len(fake.projects) == 1 and not any(r.projects for r in st.rounds)  # made, not recorded
    res = push(Study.open(study.path), units=units(3), client=fake, progress=False)
    assert len(fake.projects) == 2  # onc_a's (the one the lost answer made) and onc_b's: no orphan
    assert Study.open(study.path).round(1).projects == {"onc_a": 1, "onc_b": 2}
    assert res.imported == {"onc_a": 3, "onc_b": 3}
    said = " ".join(res.warnings)
    assert "onc_a's project: took the empty project 1" in said and "instead of making a second one" in said


def test_a_project_of_that_title_holding_tasks_is_not_taken(tmp_path):
    study = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://fake")
    fake = _LostAnswerServer()
    with pytest.raises(ServerUnreachable):
        push(study, units=units(3), client=fake, progress=False)
    fake.projects[1]["tasks"].append({"item_id": "someone else's"})
    push(Study.open(study.path), units=units(3), client=fake, progress=False)
    assert Study.open(study.path).round(1).projects == {"onc_a": 2, "onc_b": 3}


CUT = b'{"tasks": [{"id": 1, "data": {"item_id": "C-1", "te'


def test_a_task_page_cut_short_is_one_line_naming_the_call():
    with pytest.raises(ServerError) as exc:
        mocked(lambda r: httpx.Response(200, content=CUT)).task_data(3)
    msg = str(exc.value)
    assert "sent an answer that is not valid JSON (cut short?)" in msg and "(GET api/tasks/, page 1)" in msg
    assert "project 3" in msg and "\n" not in msg


def test_an_sdk_answer_cut_short_says_so_not_http_200():
    with pytest.raises(ServerError) as exc:
        mocked(lambda r: httpx.Response(200, content=b'[{"id": 1, "email": "a@b", "userna')).users()
    assert "sent an answer that is not valid JSON (cut short?) while listing users" in str(exc.value)
