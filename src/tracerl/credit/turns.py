"""Trajectories -> turn-level tensors, and turn-level values back onto tokens.

Turn k of a trajectory owns its action tokens; its observation tokens belong to no
turn (they are masked out of the loss anyway). Token tensors follow
`tracerl.train.batch`: column j is the prediction of token j+1 of the full sequence.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import torch

from tracerl.credit.evaluators import StepEvaluator
from tracerl.types import Trajectory

StateKey = Callable[[Trajectory, int], str]


def turn_ids(trajectory: Trajectory) -> list[int]:
    """For each response token: the index of the turn whose action it is, else -1."""
    out: list[int] = []
    for k, t in enumerate(trajectory.turns):
        out.extend([k] * len(t.action_ids))
        out.extend([-1] * len(t.observation_ids))
    return out


def turn_id_matrix(trajectories: Sequence[Trajectory], width: int) -> torch.Tensor:
    """(B, width) turn index of each predicted position (-1 on prompt, observations, padding)."""
    out = torch.full((len(trajectories), width), -1, dtype=torch.long)
    for i, t in enumerate(trajectories):
        ids = turn_ids(t)
        start = len(t.prompt_ids) - 1
        out[i, start:start + len(ids)] = torch.tensor(ids, dtype=torch.long)
    return out


def turn_end_mask(turn_index: torch.Tensor) -> torch.Tensor:
    """(B, T) 1 on the last action token of each turn, from a turn-id matrix."""
    nxt = torch.cat([turn_index[:, 1:], torch.full_like(turn_index[:, :1], -1)], dim=1)
    return ((turn_index >= 0) & (nxt != turn_index)).to(torch.float32)


def per_turn_to_tokens(per_turn: torch.Tensor, turn_index: torch.Tensor) -> torch.Tensor:
    """Spread (B, K) per-turn values onto (B, T) tokens; 0 where turn_index is -1.
    NaN per-turn values become 0."""
    clean = torch.nan_to_num(per_turn, nan=0.0)
    idx = turn_index.clamp(min=0)  # (B, T)
    spread = clean.gather(1, idx)  # (B, T)
    return torch.where(turn_index >= 0, spread, torch.zeros_like(spread))


def turn_rewards(trajectories: Sequence[Trajectory], evaluator: StepEvaluator,
                 turns: int) -> torch.Tensor:
    """(B, turns) evaluator scores; NaN where the turn does not exist or it abstains."""
    out = torch.full((len(trajectories), turns), float("nan"))
    for i, t in enumerate(trajectories):
        for k in range(len(t.turns)):
            score = evaluator(t, k)
            if score is not None:
                out[i, k] = score
    return out


def observation_key(trajectory: Trajectory, turn_index: int) -> str:
    """Default anchor state: the text the agent saw last before the turn (the previous
    turn's observations, or the prompt before turn 0)."""
    if turn_index == 0:
        return "\x00".join(m.content for m in trajectory.task.messages)
    return "\x00".join(m.content for m in trajectory.turns[turn_index - 1].observations)


def anchor_ids(trajectories: Sequence[Trajectory], turns: int,
               state_key: StateKey = observation_key) -> torch.Tensor:
    """(B, turns) integer ids of each turn's starting state; equal states (same task and
    same key) share an id; -1 where the turn does not exist."""
    out = torch.full((len(trajectories), turns), -1, dtype=torch.long)
    seen: dict[str, int] = {}
    for i, t in enumerate(trajectories):
        for k in range(len(t.turns)):
            raw = f"{t.task.id}\x00{state_key(t, k)}"
            key = hashlib.sha256(raw.encode()).hexdigest()
            out[i, k] = seen.setdefault(key, len(seen))
    return out
