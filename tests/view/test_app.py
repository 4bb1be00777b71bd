"""The viewer's pages over real run directories, through the ASGI app (no browser)."""

from __future__ import annotations

import re
import shutil

import pytest
from starlette.testclient import TestClient

from tracerl.trace import Tracer, TraceStore, load_trajectory
from tracerl.trace.query import TrajectoryFilter, find_trajectories
from tracerl.train.loggers import MetricsLog
from tracerl.view.app import create_app

pytestmark = pytest.mark.slow  # the `runs` fixture trains two tiny runs (once per session)


@pytest.fixture(scope="module")
def client(runs) -> TestClient:
    return TestClient(create_app(runs))


def _trace_ids(html: str, run: int) -> list[str]:
    return re.findall(rf'href="/r/{run}/t/([0-9a-f]{{32}})"', html)


def test_run_page_shows_each_runs_summary_config_and_traces(client):
    html = client.get("/").text
    for name in ("search", "search-b"):
        assert f">{name}</a>" in html and f"{name}: config.yaml" in html
    assert "search:eval" in html and "advantage: reinforce_pp" in html


def test_curves_overlay_every_run_on_one_step_axis(client):
    charts = {c["title"]: c for c in client.get("/api/charts").json()["charts"]}
    assert {"Reward", "Success", "Tool use", "KL to behaviour policy", "Clip fraction",
            "Unjudged",
            "Guard decisions"} <= set(charts)
    reward = charts["Reward"]
    assert reward["x"] == [0, 1, 2, 3]  # held-out at 0 and 3, training at 1-3
    labels = [s["label"] for s in reward["series"]]
    assert "search: train (per step)" in labels and "search-b: held-out (evaluations)" in labels
    assert all(len(s["values"]) == 4 for s in reward["series"])


def test_the_list_filters_and_says_what_was_wrong(client, runs):
    with TraceStore(runs[0]) as store:
        guarded = find_trajectories(store, TrajectoryFilter(run="search", guard=True)).total
    html = client.get("/r/0/", params={"guard": "yes"}).text
    assert f"{guarded} trajectories match" in html and len(_trace_ids(html, 0)) == guarded
    bad = client.get("/r/0/", params={"min_reward": "high"})
    assert bad.status_code == 400
    assert "min_reward: expected a number, got &#39;high&#39;" in bad.text
    assert client.get("/r/0/", params={"status": "finished"}).status_code == 400
    assert client.get("/r/7/").status_code == 404


def test_task_model_and_tool_text_reach_the_page_as_text(client):
    trace_id = _trace_ids(client.get("/r/0/").text, 0)[0]
    html = client.get(f"/r/0/t/{trace_id}").text
    assert html.count("<script") == 1  # the app's own script tag, nothing from the run
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img" not in html


def test_unknown_traces_and_bad_comparisons_are_pages_not_tracebacks(client):
    assert client.get("/r/0/t/ffffffff").status_code == 404
    bad = client.get("/compare", params={"a": "zero", "b": "1:abc"})
    assert bad.status_code == 400 and "a: expected RUN:TRACE_ID" in bad.text


def test_a_run_still_writing_shows_new_steps_on_refresh(runs, tmp_path):
    live = shutil.copytree(runs[0], tmp_path / "live")
    client = TestClient(create_app([live]))
    before = client.get("/r/0/").text
    assert "24 trajectories match" in before
    with TraceStore(live) as store:
        (row,) = find_trajectories(store, TrajectoryFilter(run="search"), limit=1).rows
        traj = load_trajectory(store, row.summary.trace_id)
    with Tracer(live / "traces.sqlite") as tracer:
        tracer.record_trajectory(traj, run="search", step=4)
    log = MetricsLog(live)
    log.log("rl", 4, {"reward_mean": 0.9, "success": 1.0})
    log.close()
    with (live / "metrics.jsonl").open("a") as f:
        f.write('{"stage": "rl", "step": 5, "rew')  # a line still being written
    assert "25 trajectories match" in client.get("/r/0/").text
    reward = next(c for c in client.get("/api/charts").json()["charts"] if c["title"] == "Reward")
    assert reward["x"][-1] == 4  # the new step, not the half-written one
