"""`tracerl view` in a real browser: Chromium (Debian's package) driven by Playwright,
against the real CLI serving two real run directories.

Each test saves a screenshot into $TRACERL_SCREENSHOTS when set (else the session's
temporary directory, printed by the `shots` fixture) so that a person can look at what
the tests saw. Chromium is a system package, not a Python one: without it these tests
skip, saying so; `.ci/run` installs it first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.slow,  # trains two tiny runs, starts the server and a browser
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get "
                                                 "install chromium; .ci/run installs it)"),
]


@pytest.fixture(scope="module")
def server(runs) -> Iterator[str]:
    """`tracerl view RUN RUN --port 0` in a child process; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracerl.cli", "view", str(runs[0]), str(runs[1]), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("tracerl view: http://127.0.0.1:"), (
            line + (proc.stderr.read() if proc.stderr and proc.poll() is not None else ""))
        yield line.split()[2]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    where = os.environ.get("TRACERL_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    print(f"screenshots: {path}")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # --no-sandbox: Chromium refuses its sandbox as root (CI containers run as root)
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def context(browser, server):
    context = browser.new_context(viewport={"width": 1300, "height": 900}, base_url=server)
    yield context
    context.close()


def _watched(context, server: str):
    """A new page, and the list its listeners fill with what must never happen: a dialog
    (a script from the run's text ran), a script error, a request off this server."""
    pg = context.new_page()
    problems: list[str] = []
    pg.on("dialog", lambda d: (problems.append(f"dialog {d.message}"), d.dismiss()))
    pg.on("pageerror", lambda e: problems.append(f"script error {e}"))
    pg.on("request", lambda r: problems.append(f"off-line request {r.url}")
          if not r.url.startswith(server) else None)
    return pg, problems


@pytest.fixture
def page(context, server):
    pg, problems = _watched(context, server)
    yield pg
    pg.close()
    assert problems == []


@pytest.fixture(scope="module")
def trajectory(context, server):
    """One guarded, trained trajectory of the REINFORCE++ run, opened from the list."""
    pg, problems = _watched(context, server)
    pg.goto("/r/1/?guard=yes")
    pg.click("#trajectories a.open >> nth=0")
    pg.wait_for_selector(".tokens.sampled")
    yield pg
    pg.close()
    assert problems == []


def test_run_page_draws_the_curves_of_both_runs(page, shots):
    page.goto("/")
    page.wait_for_selector("#charts[data-ready=true]")
    titles = page.locator(".chart h3").all_inner_texts()
    assert {"Reward", "Success", "Tool use", "KL to behaviour policy", "Unjudged",
            "Guard decisions"} <= set(titles)
    assert page.locator(".chart canvas").count() == len(titles)
    legend = page.locator(".chart[data-title=Reward] .u-legend").inner_text()
    assert "search: train (per step)" in legend and "search-b: held-out (evaluations)" in legend
    page.screenshot(path=shots / "run-page.png", full_page=True)


def test_the_list_filters_by_guard_and_searches_text(page, shots):
    page.goto("/r/0/")
    total = page.locator("#trajectories tbody tr").count()
    page.select_option("select[name=guard]", "yes")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**guard=yes**")
    guarded = page.locator("#trajectories tbody tr")
    assert 0 < guarded.count() < total
    assert guarded.count() == page.locator("#trajectories tbody .badge.guard").count()
    page.fill("input[name=q]", "the word is ivory")
    page.select_option("select[name=guard]", "")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**q=the+word+is+ivory**")
    rows = page.locator("#trajectories tbody tr")
    assert rows.count() > 0  # ivory's result carries an e-mail: every such row is guarded
    assert rows.count() == page.locator("#trajectories tbody .badge.guard").count()
    page.screenshot(path=shots / "list-filtered.png", full_page=True)


def test_tokens_are_coloured_by_advantage_and_by_logprob_on_a_toggle(trajectory, shots):
    background = "els => els.map(e => getComputedStyle(e).backgroundColor)"
    sampled = trajectory.locator(".tokens.sampled .tok")
    by_advantage = sampled.evaluate_all(background)
    assert any(c.startswith(("rgba(22, 163, 74", "rgba(220, 38, 38")) for c in by_advantage)
    masked = trajectory.locator(".tok.masked")
    assert masked.count() > 0
    assert masked.first.evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    trajectory.screenshot(path=shots / "trajectory-advantage.png", full_page=True)
    trajectory.check("#show-logprob")
    try:
        assert all(c.startswith("rgba(37, 99, 235") for c in sampled.evaluate_all(background))
        trajectory.screenshot(path=shots / "trajectory-logprob.png", full_page=True)
    finally:
        trajectory.uncheck("#show-logprob")


def test_guard_decisions_are_highlighted_on_the_tool_call(trajectory):
    tool = trajectory.locator(".tool.guarded").first
    assert tool.is_visible()
    assert tool.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
    assert "guard:" in tool.locator(".guard-note .badge.guard").first.inner_text()


def test_script_and_html_in_the_run_render_as_text(trajectory):
    assert trajectory.title().endswith("tracerl view")  # the tool output's script set none
    assert trajectory.locator("main script, main img, main b").count() == 0
    text = trajectory.locator("main").inner_text()
    assert '<script>document.title="pwned"</script>' in text
    assert "<img src=x onerror=alert(1)>" in text


def test_the_same_task_at_two_steps_side_by_side(page, shots):
    page.goto("/r/0/?run=search%3Aeval&step=0")
    page.click("#trajectories a.open >> nth=0")
    page.locator('#peers tr[data-run="search:eval"][data-step="3"] a.compare').first.click()
    page.wait_for_selector(".sides")
    heads = page.locator(".side h2").all_inner_texts()
    assert heads[0].endswith("step 0") and heads[1].endswith("step 3")
    tasks = page.locator(".side dl.facts dd.mono").all_inner_texts()
    assert tasks[0].split(" · ")[0] == tasks[1].split(" · ")[0]  # the same task id
    page.screenshot(path=shots / "compare-steps.png", full_page=True)
