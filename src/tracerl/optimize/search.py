"""The search context every optimizer works through: scoring prompts on real rollouts,
asking the teacher, and keeping the history.

`Search.score` writes the prompt into each task (tracerl.optimize.prompt), runs the
tasks through the RolloutRunner (the one training uses, over the metered and cached
task model) and records an Evaluation. The objective is the runner's reward, so a
raising objective is contained by the runner like any reward: those rollouts are
unjudged (counted), and a candidate with no judged rollout at all is recorded as
`unjudged` with the first error, never scored 0.

Optimizers stop when the budget is spent (`BudgetExhausted` from the ledger, caught by
`optimize`) or when `max_evaluations` entries exist. A resumed search replays the
optimizer from the start with the same seed: every model call it makes again is
answered by the cache for free, and the entries it reproduces are the ones already in
history.jsonl (not written twice), so it continues exactly where it stopped.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

from tracerl.optimize.budget import Ledger, Spent
from tracerl.optimize.data import SearchData
from tracerl.optimize.feedback import UnusableReply, parse_prompt
from tracerl.optimize.history import Evaluation, HistoryLog, Status, best
from tracerl.optimize.prompt import Prompt, apply_prompt
from tracerl.optimize.settings import SearchSettings
from tracerl.optimize.teacher import Teacher, TeacherSettings
from tracerl.rollout.config import RolloutConfig
from tracerl.rollout.runner import RolloutRunner
from tracerl.types import Message, Task, Trajectory

MAX_REPEATS = 200


class SearchDone(Exception):
    """The search reached `max_evaluations` entries."""


class Search:
    def __init__(self, data: SearchData, start: Prompt, runner: RolloutRunner,
                 teacher: Teacher, teacher_settings: TeacherSettings, ledger: Ledger,
                 settings: SearchSettings, seed: int, rollout: RolloutConfig,
                 log: HistoryLog | None = None,
                 prior: Sequence[Evaluation] = (),
                 on_entry: Callable[[Evaluation], None] | None = None) -> None:
        self.data, self.start, self.runner = data, start, runner
        self.teacher, self.teacher_settings = teacher, teacher_settings
        self.ledger, self.settings, self.rollout = ledger, settings, rollout
        self.rng = random.Random(seed)
        self.log = log or HistoryLog(None)
        self.prior = list(prior)
        self.on_entry = on_entry
        self.history: list[Evaluation] = []
        self._memo: dict[tuple[str, tuple[str, ...]], Evaluation] = {}
        self._mark = ledger.spent
        self._asked = 0
        self._repeats = 0

    # -- scoring -----------------------------------------------------------------------
    def score(self, prompt: Prompt, tasks: Sequence[Task] | None = None, *,
              operation: str, parents: Sequence[int] = ()) -> Evaluation:
        """Score `prompt` on `tasks` (default: every search task); a prompt already scored
        on the same tasks is not scored again (its entry is returned)."""
        tasks = tuple(tasks) if tasks is not None else self.data.train
        memo_key = (prompt.key(), tuple(t.id for t in tasks))
        if memo_key in self._memo:
            self._repeats += 1
            if self._repeats > MAX_REPEATS:
                raise SearchDone(f"the optimizer proposed only prompts already scored "
                                 f"{MAX_REPEATS} times in a row (its space is exhausted)")
            return self._memo[memo_key]
        self._repeats = 0
        self._room()
        started = time.time()
        prompted = [apply_prompt(prompt, t, self.data.examples) for t in tasks]
        groups = self.runner.run(prompted, group_size=self.rollout.group_size,
                                 temperature=self.rollout.temperature)
        trajs = tuple(t for g in groups for t in g.trajectories)
        task_scores = {g.task.id: _mean([t.outcome_reward for t in g.trajectories])
                       for g in groups}
        judged = [t.outcome_reward for t in trajs if t.outcome_reward is not None]
        status: Status = "scored" if judged else "unjudged"
        note = "" if judged else f"no rollout was judged; first error: {_first_error(trajs)}"
        entry = self._record(prompt, operation, parents, status, _mean(judged), task_scores,
                             full=len(tasks) == len(self.data.train), note=note,
                             unjudged=len(trajs) - len(judged), started=started,
                             trajectories=trajs)
        self._memo[memo_key] = entry
        return entry

    def skip(self, prompt: Prompt, operation: str, parents: Sequence[int], reason: str) -> None:
        """Record a proposal that could not be used (its teacher calls stay accounted)."""
        self._record(prompt, operation, parents, "skipped", None, {}, full=False,
                     note=reason, started=time.time())

    def abort(self, reason: str) -> None:
        """Record the spend since the last entry of a scoring cut short."""
        if self.ledger.spent != self._mark:
            self._record(self.start, "aborted", (), "aborted", None, {}, full=False,
                         note=reason, started=time.time(), replay=False)

    def _record(self, prompt: Prompt, operation: str, parents: Sequence[int], status: Status,
                score: float | None, task_scores: dict[str, float | None], *, full: bool,
                note: str, started: float, unjudged: int = 0,
                trajectories: tuple[Trajectory, ...] = (), replay: bool = True) -> Evaluation:
        index = len(self.history)
        now, before = self.ledger.spent, self._mark
        self._mark = now
        entry = Evaluation(
            index=index, prompt=prompt, operation=operation, parents=tuple(parents),
            status=status, score=score, task_scores=task_scores, full=full,
            calls=now.calls - before.calls, tokens=now.tokens - before.tokens,
            cached_calls=now.cached_calls - before.cached_calls, spent_calls=now.calls,
            spent_tokens=now.tokens, unjudged=unjudged, note=note,
            seconds=round(time.time() - started, 3), trajectories=trajectories)
        old = self.prior[index] if replay and index < len(self.prior) else None
        if old is not None and old.prompt == prompt and old.status == status:
            entry = Evaluation(**{**old.__dict__, "trajectories": trajectories})
        else:
            self.prior = self.prior[:index]  # the replay diverged: from here on it is new
            self.log.write(entry)
        self.history.append(entry)
        if self.on_entry is not None:
            self.on_entry(entry)
        return entry

    def _room(self) -> None:
        """Stop before spending anything once `max_evaluations` entries exist."""
        limit = self.settings.max_evaluations
        if limit and len(self.history) >= limit:
            raise SearchDone(f"reached {limit} evaluations")

    # -- the teacher ---------------------------------------------------------------------
    def ask(self, messages: list[Message]) -> str:
        """One teacher reply; each request of a search gets its own replica number, so
        asking the same thing twice gives two samples."""
        self._room()
        self._asked += 1
        return self.teacher.reply(messages, self.teacher_settings, replica=self._asked)

    def propose(self, parent: Prompt, slot: str, messages: list[Message], operation: str,
                parents: Sequence[int]) -> Prompt | None:
        """Ask the teacher for a new text of `slot`; None (and a skipped entry) when the
        reply is unusable."""
        reply = self.ask(messages)
        try:
            text = parse_prompt(reply, parent.slot(slot))
        except UnusableReply as e:
            self.skip(parent, operation, parents, f"{slot}: {e}; reply: {reply[:200]!r}")
            return None
        return parent.with_slot(slot, text)

    # -- helpers for optimizers ------------------------------------------------------------
    def minibatch(self) -> tuple[Task, ...]:
        k = min(self.settings.minibatch, len(self.data.train))
        return tuple(self.rng.sample(list(self.data.train), k))

    def best(self) -> Evaluation | None:
        return best(self.history)

    def spent(self) -> Spent:
        return self.ledger.spent


def _mean(values: Sequence[float | None]) -> float | None:
    judged = [v for v in values if v is not None]
    return sum(judged) / len(judged) if judged else None


def _first_error(trajs: Sequence[Trajectory]) -> str:
    return next((t.error for t in trajs if t.error), "the objective returned None")
