"""The trajectory page model: tokens with their advantages and log-probabilities,
observation tokens masked, guard decisions placed on the tool call they checked."""

from __future__ import annotations

import pytest

from tracerl.trace import TraceStore, trajectory_from_spans
from tracerl.trace.query import TrajectoryFilter, find_trajectories
from tracerl.view.tokens import TokenText, find_tokenizer
from tracerl.view.trajectory import trajectory_view

pytestmark = pytest.mark.slow  # the `runs` fixture trains two tiny runs (once per session)


@pytest.fixture(scope="module")
def guarded(runs):
    """(spans, view) of a trained, guarded trajectory of the REINFORCE++ run."""
    text = TokenText(find_tokenizer(runs[1]))
    with TraceStore(runs[1]) as store:
        row = find_trajectories(store, TrajectoryFilter(run="search-b", guard=True)).rows[0]
        spans = store.spans(row.summary.trace_id)
    return spans, trajectory_view(spans, text), text


def test_sampled_tokens_carry_their_advantage_and_logprob(guarded):
    spans, view, text = guarded
    traj = trajectory_from_spans(spans)
    advantages = traj.turn_advantages()
    assert view.trained and advantages is not None
    for turn, adv, tv in zip(traj.turns, advantages, view.turns, strict=True):
        assert [t.advantage for t in tv.tokens] == adv
        assert [t.logprob for t in tv.tokens] == turn.action_logprobs
        assert "".join(t.text for t in tv.tokens) == "".join(text.pieces(turn.action_ids))
    assert view.advantage_scale == max(abs(a) for adv in advantages for a in adv) > 0


def test_observation_tokens_are_masked_and_have_no_advantage(guarded):
    _, view, _ = guarded
    obs = [t for turn in view.turns for t in turn.observation_tokens]
    assert obs and all(t.masked and t.advantage is None and t.logprob is None for t in obs)
    assert "the word is" in "".join(t.text for t in view.turns[0].observation_tokens)


def test_guard_decisions_sit_on_the_tool_call_they_checked(guarded):
    _, view, _ = guarded
    (search,) = view.turns[0].tools
    assert search.name == "search" and search.guards
    assert len({g.target for g in search.guards}) == len(search.guards)  # one per target
    assert view.guard_count == len(search.guards) + len(view.turns[0].guards)
    assert all(g.findings and g.action != "off" for g in search.guards)
