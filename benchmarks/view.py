"""`tracerl view` response times on a run of the default size: 6,600 trajectories.

The default `tracerl train` run records 100 RL steps x 8 tasks x 8 samples = 6,400
training trajectories plus 2 x 100 held-out ones. This script makes such a run for real
(the tiny policy made smaller and RL only, so that it takes minutes, not the default
run's SFT; stored in --run-dir and reused on the next call), serves it with the viewer's
own server (uvicorn on 127.0.0.1) and times HTTP requests over one keep-alive
connection: the trajectory list (first page, last page, each filter, text search) and
trajectory pages (20 trajectories spread over the run), and once the server's first
text search, which copies the run's text into a TEMP table (trace/query.py). Each
figure is the median and p95 of --repeat requests after one warm-up.

Baselines measured in the same run, on the same store:
  traces list   `TraceStore.trajectories(run=...)`: every row of the run, as
                `tracerl traces list` reads it (the list the viewer pages through)
  traces show   `format_transcript(spans)` of the same 20 trajectories, as
                `tracerl traces show` renders one (no tokens, no HTML)

Targets (issue 18): the list answers in under 300 ms, a trajectory page in under 200 ms.

    python benchmarks/view.py [--run-dir DIR] [--repeat 20]
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

TRAIN = ["stages=[rl]", "rl.steps=100", "tiny.hidden_size=32", "tiny.layers=1", "tiny.heads=2",
         "tiny.intermediate_size=64", "log.progress=false", "log.tensorboard=false",
         "threads=1"]
LIST_TARGET_MS, PAGE_TARGET_MS = 300.0, 200.0


def ensure_run(run_dir: Path) -> None:
    if (run_dir / "summary.json").exists():
        print(f"run: {run_dir} (reused; delete it to train again)")
        return
    cmd = [sys.executable, "-m", "tracerl.cli", "train", f"out_dir={run_dir.parent}",
           f"name={run_dir.name}", "--overwrite", *TRAIN]
    print("run: training", " ".join(cmd[2:]), flush=True)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    print(f"run: trained in {time.perf_counter() - start:.0f} s")


def serve(run_dir: Path) -> tuple[str, int, Callable[[], None]]:
    import uvicorn

    from tracerl.cli.view import bind
    from tracerl.view.app import create_app

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app([run_dir]), log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)

    def stop() -> None:
        server.should_exit = True
        thread.join(10)
        sock.close()

    host, port = sock.getsockname()[:2]
    return host, port, stop


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def time_get(conn: http.client.HTTPConnection, path: str, repeat: int,
             warm_up: bool = True) -> list[float]:
    out = []
    for k in range(repeat + 1 if warm_up else repeat):
        start = time.perf_counter()
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - start) * 1000.0
        if response.status != 200:
            raise SystemExit(f"GET {path}: {response.status} {body[:200]!r}")
        if k or not warm_up:  # the first is the warm-up
            out.append(elapsed)
    return out


def time_call(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for k in range(repeat + 1):
        start = time.perf_counter()
        fn()
        if k:
            out.append((time.perf_counter() - start) * 1000.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-dir", type=Path,
                        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                        / "tracerl" / "bench" / "view-calc")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    ensure_run(args.run_dir)

    from tracerl.trace.query import TrajectoryFilter, find_trajectories
    from tracerl.trace.store import TraceStore
    from tracerl.trace.transcript import format_transcript

    store = TraceStore(args.run_dir)
    labels = {s.run: s.trajectories for s in store.runs()}
    name = min(labels, key=len)
    total = sum(labels.values())
    print(f"store: {total} trajectories ({', '.join(f'{k} {v}' for k, v in labels.items())}), "
          f"{store.count_spans()} spans, "
          f"{(args.run_dir / 'traces.sqlite').stat().st_size / 2**20:.0f} MB")
    everyone = find_trajectories(store, TrajectoryFilter(run=name), limit=labels[name]).rows
    picks = [everyone[k * len(everyone) // 20].summary.trace_id for k in range(20)]
    last_page = (labels[name] - 1) // 50 + 1

    host, port, stop = serve(args.run_dir)
    conn = http.client.HTTPConnection(host, port)
    # the first search copies the run's text into the connection's TEMP table
    first_search = time_get(conn, "/r/0/?q=calculator", 1, warm_up=False)[0]
    lists = {
        "list, first page": "/r/0/",
        f"list, last page ({last_page})": f"/r/0/?page={last_page}",
        "list, one step": "/r/0/?step=50",
        "list, tool errors": "/r/0/?tool_errors=yes",
        "list, guard findings": "/r/0/?guard=yes",
        "list, reward >= 0.5": "/r/0/?min_reward=0.5",
        "list, status truncated": "/r/0/?status=truncated",
        "list, text search (matches all)": "/r/0/?q=calculator",
        "list, text search (matches none)": "/r/0/?q=zebra+unicorn",
    }
    rows = [(label, stats(time_get(conn, path, args.repeat))) for label, path in lists.items()]
    pages = [ms for tid in picks for ms in time_get(conn, f"/r/0/t/{tid}", 1)]
    rows.append(("trajectory page (20 trajectories)", stats(pages)))
    rows.append(("first text search of the server", (first_search, first_search)))
    rows.append(("run page /", stats(time_get(conn, "/", args.repeat))))
    rows.append(("curves /api/charts", stats(time_get(conn, "/api/charts", args.repeat))))
    conn.close()
    stop()

    cli_list = stats(time_call(lambda: store.trajectories(run=name), args.repeat))
    shows = [ms for tid in picks for ms in time_call(
        lambda tid=tid: format_transcript(store.spans(tid)), 1)]
    cli_show = stats(shows)
    print(f"\n{'request':<40} {'median ms':>10} {'p95 ms':>8}")
    for label, (med, p95) in rows:
        print(f"{label:<40} {med:>10.1f} {p95:>8.1f}")
    print(f"{'baseline: traces list (all rows)':<40} {cli_list[0]:>10.1f} {cli_list[1]:>8.1f}")
    print(f"{'baseline: traces show (transcript)':<40} {cli_show[0]:>10.1f} {cli_show[1]:>8.1f}")
    worst_list = max(p95 for label, (_, p95) in rows if label.startswith("list"))
    page_p95 = rows[len(lists)][1][1]
    print(f"\nfirst list page / traces list: {rows[0][1][0] / cli_list[0]:.2f}x; "
          f"trajectory page / traces show: {rows[len(lists)][1][0] / cli_show[0]:.2f}x")
    print(f"target list < {LIST_TARGET_MS:.0f} ms: worst p95 {worst_list:.1f} ms "
          f"{'PASS' if worst_list < LIST_TARGET_MS else 'FAIL'}; "
          f"target trajectory page < {PAGE_TARGET_MS:.0f} ms: p95 {page_p95:.1f} ms "
          f"{'PASS' if page_p95 < PAGE_TARGET_MS else 'FAIL'}")


if __name__ == "__main__":
    main()
