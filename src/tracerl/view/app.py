"""The `tracerl view` web app: a Starlette application over one or more run directories.

    /                          the runs: summary, config, curves (every run overlaid)
    /api/charts                the curves as JSON (the charts on / draw from it)
    /r/<i>/                    run i's trajectories: filters, text search, pages
    /r/<i>/t/<trace id>        one trajectory: turns, tool calls, tokens by advantage
    /compare?a=<i>:<id>&b=...  two trajectories side by side
    /static/...                the stylesheet, the script and the vendored uPlot

Read-only by construction: every route is a GET, and the run's files are only read
(metrics.jsonl and summary.json at each request, so a run still training shows its new
steps on refresh; the trace store through SQLite's WAL, which readers never block).

Escaping is the template engine's: Jinja2 with autoescape on, so every piece of task,
model and tool text (and every attribute value) reaches the page as text, never as
markup. The few values placed in style attributes are numbers this module computes.
The handlers are `async` and run on the event loop thread, so each run's SQLite
connection is used by one thread only; a local single-user viewer needs no more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tracerl.trace.query import STATUSES, TrajectoryFilter, find_trajectories, steps
from tracerl.trace.store import TraceStore
from tracerl.view.charts import charts
from tracerl.view.runs import RunFiles
from tracerl.view.tokens import TokenText, find_tokenizer
from tracerl.view.trajectory import Token, TrajectoryView, trajectory_view

HERE = Path(__file__).parent
PAGE_SIZE = 50
PEERS = 40
"""Trajectories of the same task listed on a trajectory page, per run."""
_CHOICES = {"": None, "yes": True, "no": False}


def _number(x: float | None, digits: int = 3) -> str:
    return "unjudged" if x is None else f"{x:.{digits}g}"


def token_style(token: Token, scale: float) -> str:
    """CSS custom properties for one token: --a (advantage) and --l (log-probability).

    Advantage: green above 0, red below, opacity |a| / scale (the trajectory's largest
    |a|). Log-probability: blue, stronger the less likely the sampled token (1 - p)."""
    parts = []
    if token.advantage is not None and scale > 0:
        t = max(-1.0, min(1.0, token.advantage / scale))
        rgb = "22,163,74" if t >= 0 else "220,38,38"
        parts.append(f"--a:rgba({rgb},{abs(t) * 0.8:.3f})")
    if token.logprob is not None:
        p = math.exp(min(0.0, token.logprob))
        parts.append(f"--l:rgba(37,99,235,{(1.0 - p) * 0.8:.3f})")
    return ";".join(parts)


def token_title(token: Token) -> str:
    if token.masked:
        return "observation token: read by the policy, masked out of the loss"
    bits = ["advantage " + ("none (not trained on)" if token.advantage is None
                            else f"{token.advantage:+.4g}")]
    if token.logprob is not None:
        bits.append(f"log p {token.logprob:.3f} (p {math.exp(min(0.0, token.logprob)):.3f})")
    return " · ".join(bits)


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters.update(num=_number, token_style=token_style, token_title=token_title)
    return env


class BadRequest(ValueError):
    """A query parameter that does not parse; the message names it."""


def _opt(params: Mapping[str, str], key: str, kind: type) -> Any:
    raw = params.get(key, "").strip()
    if not raw:
        return None
    try:
        return kind(raw)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise BadRequest(f"{key}: expected {what}, got {raw!r}") from None


def _choice(params: Mapping[str, str], key: str) -> bool | None:
    raw = params.get(key, "")
    if raw not in _CHOICES:
        raise BadRequest(f"{key}: expected yes, no or empty, got {raw!r}")
    return _CHOICES[raw]


def parse_filter(params: Mapping[str, str], default_run: str | None
                 ) -> tuple[TrajectoryFilter, int]:
    """The list page's query string -> (filter, 1-based page number)."""
    status = params.get("status", "") or None
    if status is not None and status not in STATUSES:
        raise BadRequest(f"status: expected one of {', '.join(STATUSES)}, got {status!r}")
    page = _opt(params, "page", int) or 1
    if page < 1:
        raise BadRequest(f"page: expected 1 or more, got {page}")
    where = TrajectoryFilter(
        run=params.get("run") or default_run, step=_opt(params, "step", int), status=status,
        min_reward=_opt(params, "min_reward", float), max_reward=_opt(params, "max_reward", float),
        tool_errors=_choice(params, "tool_errors"), guard=_choice(params, "guard"),
        unjudged=_choice(params, "unjudged"), text=params.get("q", "").strip())
    return where, page


class Viewer:
    """The app's state: the runs (in command-line order) and their tokenizers."""

    def __init__(self, runs: Sequence[RunFiles]) -> None:
        if not runs:
            raise ValueError("tracerl view needs at least one run directory")
        self.runs = list(runs)
        self.env = _templates()
        self._tokens: dict[int, TokenText] = {}

    # -- helpers -------------------------------------------------------------------------
    def render(self, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(runs=self.runs, **context)
        return HTMLResponse(html, status_code=status_code)

    def run(self, index: int) -> RunFiles:
        if not 0 <= index < len(self.runs):
            raise HTTPException(404, f"no run {index}: the viewer has {len(self.runs)}")
        return self.runs[index]

    def store(self, run: RunFiles) -> TraceStore:
        store = run.store()
        if store is None:
            raise HTTPException(404, f"{run.path} has no traces yet (no traces.sqlite)")
        return store

    def token_text(self, run: RunFiles) -> TokenText:
        """The run's tokenizer, found once it exists (a new run saves it at its start)."""
        if run.index not in self._tokens:
            text = TokenText(find_tokenizer(run.path, str(run.config().get("model", ""))))
            if not text.available:
                return text
            self._tokens[run.index] = text
        return self._tokens[run.index]

    def view(self, run: RunFiles, trace_id: str) -> TrajectoryView:
        store = self.store(run)
        try:
            # a full id (every link the viewer makes) needs no prefix search over the spans
            full = trace_id if len(trace_id) == 32 else store.resolve_trace_id(trace_id)
            spans = store.spans(full)
            if not spans:
                raise KeyError(f"no trace {trace_id} in {store.path}")
            return trajectory_view(spans, self.token_text(run))
        except KeyError as e:
            raise HTTPException(404, str(e.args[0])) from None
        except ValueError as e:
            raise HTTPException(404, f"trace {trace_id}: {e}") from None

    def peers(self, view: TrajectoryView) -> list[tuple[RunFiles, Any]]:
        """Trajectories of the same task in every run (the comparison candidates)."""
        out = []
        for run in self.runs:
            store = run.store()
            if store is None:
                continue
            page = find_trajectories(store, TrajectoryFilter(task_id=view.task_id), limit=PEERS)
            out += [(run, row) for row in page.rows if row.summary.trace_id != view.trace_id]
        return out

    # -- routes --------------------------------------------------------------------------
    async def index(self, request: Request) -> Response:
        rows = []
        for run in self.runs:
            store = run.store()
            rows.append({"run": run, "summary": run.summary(), "records": run.records(),
                         "labels": store.runs() if store is not None else []})
        return self.render("index.html", rows=rows)

    async def charts(self, request: Request) -> Response:
        return JSONResponse({"charts": charts(self.runs)})

    async def trajectories(self, request: Request) -> Response:
        run = self.run(request.path_params["run"])
        store = self.store(run)
        labels = store.runs()
        names = [s.run for s in labels]
        default = run.name if run.name in names else (names[0] if names else None)
        try:
            where, page = parse_filter(request.query_params, default)
        except BadRequest as e:
            return self.render("error.html", 400, message=str(e))
        result = find_trajectories(store, where, (page - 1) * PAGE_SIZE, PAGE_SIZE)
        params = {k: v for k, v in request.query_params.items() if k != "page" and v}
        return self.render(
            "list.html", run=run, labels=labels, where=where, page=page, result=result,
            steps=steps(store, where.run) if where.run else [], statuses=STATUSES,
            query=lambda p: urlencode({**params, "page": p}), params=params)

    async def trajectory(self, request: Request) -> Response:
        run = self.run(request.path_params["run"])
        view = self.view(run, request.path_params["trace_id"])
        return self.render("trajectory.html", run=run, t=view, peers=self.peers(view))

    async def compare(self, request: Request) -> Response:
        sides = []
        for key in ("a", "b"):
            ref = request.query_params.get(key, "")
            index, _, trace_id = ref.partition(":")
            if not index.isdigit() or not trace_id:
                return self.render("error.html", 400, message=(
                    f"{key}: expected RUN:TRACE_ID (a run's index on the command line and a "
                    f"trace id), got {ref!r}"))
            run = self.run(int(index))
            sides.append((run, self.view(run, trace_id)))
        return self.render("compare.html", sides=sides)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        detail = exc.detail if isinstance(exc, HTTPException) else str(exc)
        code = exc.status_code if isinstance(exc, HTTPException) else 500
        return self.render("error.html", code, message=str(detail))


def create_app(run_dirs: Sequence[str | Path]) -> Starlette:
    """The viewer over `run_dirs` (each checked to be a run directory: ValueError if not)."""
    viewer = Viewer([RunFiles(p, i) for i, p in enumerate(run_dirs)])
    app = Starlette(routes=[
        Route("/", viewer.index),
        Route("/api/charts", viewer.charts),
        Route("/r/{run:int}/", viewer.trajectories),
        Route("/r/{run:int}/t/{trace_id}", viewer.trajectory),
        Route("/compare", viewer.compare),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ], exception_handlers={HTTPException: viewer.not_found})
    app.state.viewer = viewer
    return app

