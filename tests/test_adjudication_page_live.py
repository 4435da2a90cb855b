"""The adjudication page in a browser (headless Chromium over tests/cdp.py): the case id beside
Label Studio's task number, the decision in force, and changing a submitted decision."""

from __future__ import annotations

import json
import time

import pytest
from cdp import Browser
from conftest import invoke_cli
from test_adjudication_roundtrip import fill
from test_adjudication_scenario_live import SHEET, _study
from test_browser_raters import _card, _keep, _login, _need_chromium
from test_flags import P

from goldboard.annotate.adjudication import CHANGE_HOWTO
from goldboard.annotate.client import connect
from goldboard.study import Study

pytestmark = pytest.mark.live
run = invoke_cli


def test_adjudication_page_shows_case_and_decision_in_force(live_server, tmp_path, monkeypatch):
    _need_chromium()
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    st = _study(tmp_path, live_server)
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", st.path, "-o", sheet).exit_code == 0
    fill(sheet, {c: (v, why, None) for c, (v, why) in list(SHEET.items())[:8]})  # MTB-09 stays open
    assert run("adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_chair").exit_code == 0
    res = run("adjudicate", "push", "--study", st.path, "--adjudicator", "dr_chair")
    assert res.exit_code == 0 and "1 tasks imported" in res.output and "8 already decided not pushed" in res.output
    res = run("adjudicate", "push", "--study", st.path, "--adjudicator", "dr_chair", "--include-decided")
    assert res.exit_code == 0 and "8 tasks imported, 1 already there" in res.output, res.output
    st = Study.open(st.path)
    pid = st.adjudication["projects"]["safety_label"]
    tasks = {d["item_id"]: tid for tid, d in connect(st).task_data(pid)}
    card = _card(st, tmp_path, "dr_chair")
    task_url = f"{live_server.url}/projects/{pid}/data?task="
    with Browser(tmp_path / "profile-chair", height=1600) as browser:
        page = browser.new_page()
        _login(page, live_server.url, card)
        _open(page, task_url, tasks, "MTB-02")
        text = page.text()
        assert f"Current decision: {SHEET['MTB-02'][0]} (by dr_chair, in the review sheet review.xlsx, " in text
        assert f"reason: {SHEET['MTB-02'][1]})" in text and CHANGE_HOWTO in text
        _keep(page.screenshot(tmp_path / "adjudication_page.png"))
        assert _button(page, "Submit") is True  # disabled until a value is chosen
        # decide: a value, a reason (Add), Submit
        _choose(page, "Unsupported")
        _type(page, "first reason")
        page.click_text("button", "Add")
        page.click_text("button", "Submit")
        page.wait_for("document.body.innerText.includes('Update')", what="the submitted annotation")
        # change it: a new value, the reason edited with its pencil button, Shift+Enter, Update
        _open(page, task_url, tasks, "MTB-02")
        assert _button(page, "Update") is True  # nothing changed yet
        _choose(page, "Partially Supported")
        assert _button(page, "Update") is False
        page.js("document.querySelector('[data-testid=htx-textbox-edit-button]').click()")
        page.wait_for(
            "document.activeElement && document.activeElement.tagName === 'TEXTAREA'", what="the reason editor"
        )
        page.js("document.activeElement.select()")
        page.call("Input.insertText", text="second reason")
        _shift_enter(page)
        time.sleep(1)
        _keep(page.screenshot(tmp_path / "adjudication_changed.png"))
        page.click_text("button", "Update")
        time.sleep(2)
        # a decision submitted without a reason, reopened to add one: Update waits for Add / Shift+Enter
        _open(page, task_url, tasks, "MTB-04")
        _choose(page, SHEET["MTB-04"][0])
        page.click_text("button", "Submit")
        page.wait_for("document.body.innerText.includes('Update')", what="the submitted annotation")
        _open(page, task_url, tasks, "MTB-04")
        _type(page, "reread: the caveat holds")
        assert _button(page, "Update") is True  # typed, not added: still disabled
        _keep(page.screenshot(tmp_path / "adjudication_reason_typed.png"))
        _shift_enter(page)
        page.wait_for("!document.querySelector('textarea')", what="the reason added")
        assert _button(page, "Update") is False
        page.click_text("button", "Update")
        time.sleep(2)
    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code == 0, res.output
    latest = {}
    for e in map(json.loads, st.decisions_path.read_text().splitlines()):
        latest[e["item_id"]] = e
    assert (latest["MTB-02"]["decision"], latest["MTB-02"]["reason"]) == (P, "second reason")
    assert (latest["MTB-04"]["decision"], latest["MTB-04"]["reason"]) == (
        SHEET["MTB-04"][0],
        "reread: the caveat holds",
    )
    assert "1 changed, 1 confirmed (same value)" in res.output


def _open(page, task_url: str, tasks: dict, case: str) -> None:
    page.goto(f"{task_url}{tasks[case]}")
    page.wait_text(f"Adjudication: Safety label · case {case}")  # the labeling pane, not only the task list
    time.sleep(3)  # Label Studio mounts the labeling pane twice while the task loads
    page.wait_text(f"Adjudication: Safety label · case {case}")


def _button(page, label: str):
    """``disabled`` of the button labelled ``label`` (None: no such button)."""
    return page.js(
        f"""(() => {{ const b = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === {json.dumps(label)});
          return b ? b.disabled : null; }})()"""
    )


def _choose(page, value: str) -> None:
    """Click the final-value radio ``value`` (not a rater's pane that shows the same words)."""
    ok = page.js(
        f"""(() => {{ const l = [...document.querySelectorAll('input[type=radio]')].map(i => i.closest('label'))
            .find(l => l && l.innerText.trim().split('\\n')[0].trim() === {json.dumps(value)});
          if (!l) return false; l.click(); return true; }})()"""
    )
    assert ok, f"no choice {value!r}"
    time.sleep(0.5)


def _type(page, text: str) -> None:
    page.js("document.querySelector('textarea').focus()")
    page.call("Input.insertText", text=text)
    time.sleep(0.5)


def _shift_enter(page) -> None:
    for kind in ("rawKeyDown", "keyUp"):
        page.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13, modifiers=8)
