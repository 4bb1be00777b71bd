"""The training curves of a run as data: one Panel per quantity, one Series per line.

Panels, each left out when its data are absent: reward, success (train per RL step,
held-out at every evaluation), tool use, SFT loss, DPO loss, KL to the reference, KL to
the behaviour policy, clip fraction, entropy, unjudged samples and guard decisions. KL
to the reference, unjudged samples and env errors count as absent when they are 0 at
every step (no reference model, nothing failed) unless `keep_zeros`.

Two KLs, never one panel called "KL": `kl` is the policy's distance from the reference
model (what kl_coef holds back; computed only when kl_coef > 0), `approx_kl` how far
each update moved the policy from the behaviour policy that sampled the batch (PPO's
update-size diagnostic). Guard decisions are events (a step with none has no point), so
they are markers, not a line through the steps between them. curves.png draws these
(plot.py) and so does `tracerl view`; this module imports no plotting library.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Series:
    label: str
    steps: list[float]
    values: list[float]
    style: str = "-"
    """A matplotlib format: "-" a line per step, "o--" markers joined (evaluations),
    "o" markers alone (events)."""


@dataclass(frozen=True)
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    unit_range: bool = False
    """Fractions (and rewards that stay in [0, 1]): the y axis spans [0, 1]."""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _series(records: Sequence[dict[str, Any]], key: str, label: str, style: str = "-",
            zero_is_absent: bool = False, events: bool = False) -> list[Series]:
    """`key` against `step` over the records that have it; [] when there are none (or,
    with `zero_is_absent`, when every value is 0). `events`: only the steps where it
    is not 0, drawn as markers alone."""
    points = [(r["step"], r[key]) for r in records if _number(r.get(key))]
    if events:  # an all-zero series kept (not zero_is_absent) shows its zeros
        nonzero = [p for p in points if p[1] != 0]
        points, style = nonzero if nonzero or zero_is_absent else points, "o"
    if not points or (zero_is_absent and not any(v != 0 for _, v in points)):
        return []
    points.sort(key=lambda p: p[0])  # stable: a repeated step keeps its order
    return [Series(label, [p[0] for p in points], [p[1] for p in points], style)]


def panels(records: Sequence[dict[str, Any]], evals: Sequence[dict[str, Any]],
           keep_zeros: bool = False) -> list[Panel]:
    """The panels that have data, in display order (`keep_zeros`: an all-zero KL,
    unjudged or guard series is shown rather than left out)."""
    absent = not keep_zeros
    rl = [r for r in records if r.get("stage") == "rl"]
    reward = (_series(rl, "reward_mean", "train (per step)")
              + _series(evals, "mean_reward", "held-out (evaluations)", "o--"))
    sft = [r for r in records if r.get("stage") == "sft"]
    dpo = [r for r in records if r.get("stage") == "dpo"]
    candidates = [
        Panel("Reward", "RL step", "mean outcome reward", reward,
              unit_range=all(0 <= v <= 1 for s in reward for v in s.values)),
        Panel("Success", "RL step", "fraction of samples",
              _series(rl, "success", "train (per step)")
              + _series(evals, "success", "held-out (evaluations)", "o--"), unit_range=True),
        Panel("Tool use", "RL step", "per sample",
              _series(rl, "tool_use", "tool_use (fraction with a call)")
              + _series(rl, "tool_errors", "tool_errors (errors per sample)")),
        Panel("SFT loss", "SFT step", "cross-entropy", _series(sft, "loss", "loss")),
        Panel("DPO loss", "DPO step", "loss", _series(dpo, "loss", "loss")),
        Panel("KL to reference", "RL step", "nats per token",
              _series(rl, "kl", "kl (policy || reference model)", zero_is_absent=absent)),
        Panel("KL to behaviour policy", "RL step", "nats per token",
              _series(rl, "approx_kl", "approx_kl (sampling policy || updated policy)")),
        Panel("Clip fraction", "RL step", "fraction of tokens",
              _series(rl, "clip_fraction", "clip_fraction")),
        Panel("Entropy", "RL step", "nats per token", _series(rl, "entropy", "entropy")),
        Panel("Unjudged", "RL step", "samples per step",
              _series(rl, "unjudged", "unjudged (reward could not be judged)",
                      zero_is_absent=absent)
              + _series(rl, "env_errors", "env_errors (failed episodes)", zero_is_absent=absent)),
        Panel("Guard decisions", "RL step", "per step",
              [s for key in _guard_keys(rl)
               for s in _series(rl, key, key, zero_is_absent=absent, events=True)]),
    ]
    return [p for p in candidates if p.series]




def _guard_keys(records: Sequence[dict[str, Any]]) -> list[str]:
    """The `guard/<action>` counts present in any record, sorted."""
    return sorted({k for r in records for k in r if k.startswith("guard/")})
