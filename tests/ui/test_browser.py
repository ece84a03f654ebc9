"""`s3 ui` in a real browser: Debian's headless Chromium driven by Playwright's Python API.

A person's walk on a state built by the real hooks and `s3` commands (tests/ui/conftest.py): open the
printed URL, visit every page from the menu, search (with as-of), open an episode, forget a memory and
see it gone from `s3 recall`. Any console error, page error or script dialog fails the test.
Screenshots of the main pages go to $SOPHIA_UI_SCREENSHOTS (docs/screenshots/ when refreshing them),
else to the test's temp dir.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import HOSTILE, Server, s3

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.is_file():
    pytest.skip("browser tests: /usr/bin/chromium is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests: playwright is not installed "
                                                              "(pip install playwright)")

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGES = [("Overview", "overview"), ("Episodes", "episodes"), ("Rules", "rules"), ("Procedures", "procedures"),
         ("Facts & foresight", "facts"), ("Profile", "profile"), ("Scenes", "scenes"), ("Conflicts", "conflicts"),
         ("Team", "team"), ("Digest queue", "digests"), ("Guardian", "guardian")]
MAIN = {"overview", "search", "episode", "rules", "procedures", "facts", "digests", "guardian"}  # the README shows these
# every chart label, as Chromium lays it out: inside its picture and at least this tall on the screen
LABELS = """() => [...document.querySelectorAll('svg.chart')].flatMap(svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('text')].map(t => { const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left - box.left, right: box.right - r.right, height: r.height}; });
})"""


class Browser:
    def __init__(self, ctx: Any, shots: Path) -> None:
        self.ctx, self.shots, self.problems = ctx, shots, []  # type: list[str]
        self.page = ctx.new_page()
        self.page.set_viewport_size({"width": 1200, "height": 900})
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))

    def shot(self, name: str) -> None:
        if name in MAIN:
            self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)


@pytest.fixture(scope="module")
def browser(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    shots = Path(os.environ.get("SOPHIA_UI_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    shots.mkdir(parents=True, exist_ok=True)
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(profile), executable_path=str(CHROMIUM), headless=True,
                                                   args=ARGS)
        try:
            b = Browser(ctx, shots)
            b.page.goto(server.url)  # the URL `s3 ui` printed
            yield b
        finally:
            ctx.close()


def test_every_page_from_the_menu(browser: Browser, server: Server) -> None:
    page = browser.page
    assert page.url == f"http://127.0.0.1:{server.port}/", "the token should leave the address bar"
    for label, name in PAGES:
        page.get_by_role("navigation").get_by_role("link", name=label, exact=True).click()
        page.wait_for_load_state()
        assert page.locator("h1").first.is_visible(), label
        assert "Traceback" not in page.content()
        assert page.locator("p.about").first.is_visible(), f"{label}: nothing says what fills the page"
        labels = page.evaluate(LABELS)
        cut = [x["text"] for x in labels if x["left"] < -0.5 or x["right"] < -0.5]
        small = [x["text"] for x in labels if x["height"] < 10]
        assert not cut and not small, (label, cut, small)
        browser.shot(name)
    assert browser.problems == []


def test_overview_shows_identity_charts_and_health(browser: Browser) -> None:
    page = browser.page
    page.goto(page.url.split("/", 3)[0] + "//" + page.url.split("/")[2] + "/")
    text = page.inner_text("main")
    assert "sophia-system3" in text and "Creed" in text and "Storage and index health" in text
    assert page.locator("svg.chart").count() >= 3
    assert browser.problems == []


def test_search_with_as_of_and_open_an_episode(browser: Browser, state: dict[str, Any]) -> None:
    page = browser.page
    page.get_by_role("link", name="Episodes", exact=True).click()
    page.fill("input[name=q]", "docker compose")
    page.press("input[name=q]", "Enter")
    page.wait_for_load_state()
    assert "docker compose down" in page.inner_text(".results")
    browser.shot("search")
    # as of a date before anything was recorded... the rule is timeless, the future job fact is not yet
    page.fill("input[name=q]", "new job")
    page.fill("input[name=as_of]", "2026-03-01")
    page.press("input[name=q]", "Enter")
    page.wait_for_load_state()
    assert "as of 2026-03-01" in page.inner_text(".results h2")
    # hostile input is shown as text, runs nothing
    page.fill("input[name=q]", " ".join(HOSTILE))
    page.fill("input[name=as_of]", "")
    page.press("input[name=q]", "Enter")
    page.wait_for_load_state()
    assert HOSTILE[0] in page.inner_text(".results h2")
    page.locator("ol.timeline").get_by_role("link", name="Please write my notes file about fishing").click()
    page.wait_for_load_state()
    text = page.inner_text("main")
    for part in ("Actions", "Errors", "Outcome", "Heuristics", "Links", "transcript", state["episode"]):
        assert part in text, part
    assert state["transcript"] in text
    browser.shot("episode")
    assert browser.problems == []


def test_forget_a_memory_and_it_is_gone_from_s3_recall(browser: Browser, state: dict[str, Any]) -> None:
    env = state["env"]
    before = json.loads(s3(["recall", "Italy travelling", "--as-of", "2026-03-15", "--json"], env).stdout)["results"]
    fs = next(r for r in before if r["type"] == "foresight")
    page = browser.page
    page.get_by_role("link", name="Facts & foresight", exact=True).click()
    card = page.locator("article.memory", has_text="travelling in Italy")
    assert fs["id"] in card.inner_text()
    card.get_by_role("link", name="forget…").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == f"Forget {fs['id']}?"
    page.get_by_role("button", name="Forget").click()
    page.wait_for_load_state()
    assert f"Forgot {fs['id']}" in page.inner_text("main")
    after = json.loads(s3(["recall", "Italy travelling", "--as-of", "2026-03-15", "--json"], env).stdout)["results"]
    assert fs["id"] not in [r["id"] for r in after]
    page.get_by_role("link", name="back").click()
    assert "travelling in Italy" not in page.inner_text("main")
    assert browser.problems == []


def test_edit_then_forget_a_learned_procedure(browser: Browser, state: dict[str, Any]) -> None:
    """Issue 32: what the zero-token learners taught is on a page, with its evidence and confidence, and a
    person changes or forgets it there as they would a rule."""
    env = state["env"]
    page = browser.page
    page.get_by_role("navigation").get_by_role("link", name="Procedures", exact=True).click()
    shop = page.locator("section.project", has=page.get_by_role("heading", name=state["shop"], exact=True))
    fix = shop.locator("article.procedure").first
    assert "evidence (" in fix.inner_text() and "%" in fix.locator(".conf").inner_text()
    fix.get_by_role("link", name="edit…").click()
    page.wait_for_load_state()
    page.fill("textarea[name=text]", "when `pytest -q` cannot import widgets, run `pytest -q --import-mode=importlib`")
    page.select_option("select[name=status]", "demoted")
    page.get_by_role("button", name="Review the change").click()
    page.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    assert page.url.endswith("/procedures")
    procs = json.loads(s3(["list", "procedures", "--json"], env).stdout)
    edited = next(p for p in procs if "cannot import widgets" in p["text"])
    assert edited["meta"]["status"] == "demoted" and edited["meta"]["user_status"] == "demoted"
    card = page.locator("article.procedure", has_text="cannot import widgets")
    assert "demoted (your choice)" in card.inner_text()
    card.get_by_role("link", name="forget…").click()
    page.get_by_role("button", name="Forget").click()
    page.wait_for_load_state()
    assert f"Forgot {edited['id']}" in page.inner_text("main")
    assert edited["id"] not in s3(["list", "procedures", "--json"], env).stdout
    assert browser.problems == []
