"""The raters' side in a real browser: headless Chromium logs in to the embedded Label Studio
as each person and tries what a curious colleague would (see tests/cdp.py for the driver).

* rater B cannot list, open or read rater A's project or an adjudication project -- neither
  from the project list nor by typing the URL, nor through the API with B's session;
* the adjudicator sees the adjudication projects and nothing of the raters';
* B's labeling page shows each value's definition under it, display names ("ECOG status"),
  and absent case fields as "not documented".

Skipped only where Chromium is absent (CI installs the Debian package ``chromium``).  Set
``GOLDBOARD_SCREENSHOTS=DIR`` to keep the screenshots for a look.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from cdp import Browser, chromium_path
from test_live_roundtrip import RATERS, cases_files, desired_mtb, new_study, run

from goldboard.annotate.client import connect
from goldboard.annotate.simulate import post_ratings
from goldboard.cases.load import load_units
from goldboard.study import Study

pytestmark = pytest.mark.live


def _need_chromium() -> None:
    if chromium_path() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs the Debian package 'chromium'")
        pytest.skip("chromium is not installed (Debian/Ubuntu: apt-get install chromium)")


def _keep(shot: Path) -> None:
    keep = os.environ.get("GOLDBOARD_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)


def _card(study: Study, tmp: Path, name: str) -> dict[str, str]:
    """The person's login, handed out the way a study lead does it (a 0600 login card)."""
    card = tmp / f"{name}.txt"
    res = run("server", "login", name, "--data-dir", study.data_dir, "--card", card)
    assert res.exit_code == 0, res.output
    assert (card.stat().st_mode & 0o777) == 0o600
    text = card.read_text()
    out = {}
    for line in text.splitlines():
        key, _, val = line.strip().partition(":")
        if key in ("Open", "E-mail", "Password"):
            out[key] = val.strip()
    return out


def _login(page, url: str, card: dict[str, str]) -> None:
    page.goto(f"{url}/user/login/")
    page.wait_for("!!document.querySelector('input[name=email]')", what="the login form")
    page.js(
        f"""(() => {{
          document.querySelector('input[name=email]').value = {json.dumps(card["E-mail"])};
          document.querySelector('input[name=password]').value = {json.dumps(card["Password"])};
          document.querySelector('form').submit(); return true; }})()"""
    )
    page.wait_for("!location.pathname.startsWith('/user/login')", what="leaving the login page")


@pytest.fixture(scope="module")
def adjudicated(live_server, tmp_path_factory):
    """A blinded round both raters annotated, pulled, with adjudication projects for dr_chair."""
    tmp = tmp_path_factory.mktemp("browser")
    cases, outputs = cases_files(tmp, n=3)
    st = new_study(tmp, live_server)
    assert run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet").exit_code == 0
    st = Study.open(st.path)
    post_ratings(st, desired_mtb(load_units(cases, outputs, schema="mtb")), progress=False)
    assert run("pull", "--study", st.path, "--quiet").exit_code == 0
    res = run("adjudicate", "push", "--study", st.path, "--adjudicator", "dr_chair")
    assert res.exit_code == 0, res.output
    return Study.open(st.path), tmp


def test_rater_b_cannot_reach_rater_a_or_adjudication_in_the_browser(live_server, adjudicated, tmp_path):
    _need_chromium()
    st, _ = adjudicated
    url = live_server.url
    rnd = st.round(1)
    pa, pb = rnd.projects["onc_a"], rnd.projects["onc_b"]
    adj = list(st.adjudication["projects"].values())
    admin = connect(st)
    task_a = admin.task_data(pa)[0][0]
    ann_a = next(a["id"] for t in admin.export(pa) for a in t["annotations"])
    title_a, title_b = admin.project(pa)["title"], admin.project(pb)["title"]
    titles_adj = [admin.project(p)["title"] for p in adj]
    card_b = _card(st, tmp_path, "onc_b")
    assert card_b["Open"] == f"{url}/user/login/"
    with Browser(tmp_path / "profile-b") as browser:
        page = browser.new_page()
        _login(page, url, card_b)
        # the project list: B's own project only
        page.goto(f"{url}/projects/")
        page.wait_text(title_b)
        shot = page.screenshot(tmp_path / "rater_b_project_list.png")
        _keep(shot)
        listed = page.text()
        assert title_a not in listed and "onc_a" not in listed
        assert not any(t in listed for t in titles_adj) and "adjudication" not in listed
        # by URL: A's project and an adjudication project do not open, their data is refused
        for pid, title in [(pa, title_a), *zip(adj, titles_adj)]:
            page.goto(f"{url}/projects/{pid}/data")
            page.wait_for("document.body.innerText.length > 0")
            time.sleep(3)  # let the single-page app fetch what it can
            shot = page.screenshot(tmp_path / f"rater_b_opens_project_{pid}.png")
            _keep(shot)
            assert title not in page.text()
            assert page.status(f"/api/projects/{pid}/") == 404
            assert page.status(f"/api/tasks/?project={pid}") in (403, 404)
            assert page.status(f"/api/projects/{pid}/export?exportType=JSON") in (403, 404)
        assert page.status(f"/api/tasks/{task_a}/") == 404
        assert page.status(f"/api/annotations/{ann_a}/") == 403
        assert page.status(f"/api/projects/{pb}/") == 200  # B's own project opens
    # the adjudicator: the adjudication projects, nothing of the raters'
    card_c = _card(st, tmp_path, "dr_chair")
    with Browser(tmp_path / "profile-c") as browser:
        page = browser.new_page()
        _login(page, url, card_c)
        page.goto(f"{url}/projects/")
        for t in titles_adj:
            page.wait_text(t)
        shot = page.screenshot(tmp_path / "adjudicator_project_list.png")
        _keep(shot)
        assert title_a not in page.text() and title_b not in page.text()
        assert page.status(f"/api/projects/{adj[0]}/") == 200
        assert page.status(f"/api/projects/{pa}/") == 404
        page.goto(f"{url}/projects/{adj[0]}/data")
        page.wait_text(titles_adj[0])


def test_labeling_page_shows_definitions_display_names_and_not_documented(live_server, adjudicated, tmp_path):
    _need_chromium()
    st, _ = adjudicated
    url = live_server.url
    pb = st.round(1).projects["onc_b"]
    admin = connect(st)
    tasks = admin.task_data(pb)
    # a case lacking ECOG (the synthetic NSCLC cases leave stage/ECOG out on purpose)
    tid, data = next((t, d) for t, d in tasks if "ECOG: not documented" in d["case_text"])
    card_b = _card(st, tmp_path, "onc_b")
    with Browser(tmp_path / "profile-b2", height=1400) as browser:
        page = browser.new_page()
        _login(page, url, card_b)
        page.goto(f"{url}/projects/{pb}/data?task={tid}")
        page.wait_text("Safety label")
        page.wait_text("ECOG: not documented")
        page.wait_text(f"Case {data['case_id']}")  # the case id beside Label Studio's task number
        # definitions are on the page, under their values, without hovering
        page.wait_text("Evidence backs the therapy and the clinical information is complete.")
        page.wait_text("A critical field is missing, so safety cannot be judged.")
        assert "Schema: mtb v1.0." in page.text()
        # under, not beside: the definition's box starts below its value's name
        below = page.js(
            """(() => { const spans = [...document.querySelectorAll('span')];
              const name = spans.find(s => s.innerText.trim() === 'Unsupported');
              const defn = spans.find(s => s.innerText.trim().startsWith('Evidence does not back the therapy'));
              return name && defn ? defn.getBoundingClientRect().top - name.getBoundingClientRect().bottom : null; })()"""
        )
        assert below is not None and -1 <= below < 30, below
        _keep(page.screenshot(tmp_path / "rater_b_labeling_page_opened.png"))
        # choosing Insufficient Information reveals the missing-information checklist in readable names
        page.click_text("label, .ant-radio-wrapper, span", "Insufficient Information")
        page.wait_text("ECOG status")
        text = page.text()
        for shown in ("ECOG status", "PD-L1 expression", "Brain metastasis status", "ECOG performance status"):
            assert shown in text
        for stored in ("ecog_status", "pdl1_expression", "brain_metastasis"):
            assert stored not in text
        shot = page.screenshot(tmp_path / "rater_b_labeling_page.png")
        _keep(shot)
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)[..., :3]
    assert img.shape[0] > 600 and (img < 0.95).any(axis=2).mean() > 0.02  # not a blank page
    assert set(RATERS) == {"onc_a", "onc_b"}
