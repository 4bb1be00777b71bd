"""Turn-level credit inside group baselines: MT-GRPO and GiGPO.

Tensors are (N, G, K): N groups, G trajectories per group, K turns (the longest
trajectory's); NaN marks a turn that does not exist or whose reward could not be
judged. Both estimators add a turn-level term to GRPO's episode-level advantage, so
with the turn term at weight 0 they reduce exactly to trajectory-level GRPO.

- MT-GRPO (Zeng et al. 2025, "Reinforcing Multi-Turn Reasoning in LLM Agents via
  Turn-Level Credit Assignment"): each turn's own reward, normalised within the group,
  is added to the outcome advantage of the turn's tokens. The paper has two turns and
  normalises per turn position; with 8-20 turns positions do not line up across
  trajectories, so we normalise over all turns of the group.
- GiGPO (Feng et al. 2025, "Group-in-Group Policy Optimization for LLM Agent
  Training"): steps of a group that start from the same anchor state form a step
  group; a step's discounted return is normalised within its step group. No
  evaluator is needed: the group's own outcomes rank the actions taken from a state.
"""

from __future__ import annotations

import torch

from tracerl.algorithms.advantages import grpo_advantages


def _group_normalise(x: torch.Tensor, std_normalize: bool, eps: float) -> torch.Tensor:
    """Normalise each row's non-NaN entries over the whole row; (N, M) -> (N, M), NaN -> 0."""
    valid = ~torch.isnan(x)  # (N, M)
    count = valid.sum(1, keepdim=True).clamp(min=1)  # (N, 1)
    filled = torch.where(valid, x, torch.zeros_like(x))
    mean = filled.sum(1, keepdim=True) / count  # (N, 1)
    centred = torch.where(valid, x - mean, torch.zeros_like(x))  # (N, M)
    if not std_normalize:
        return centred
    std = (centred.pow(2).sum(1, keepdim=True) / count).sqrt()  # (N, 1)
    return centred / (std + eps)


def mt_grpo_advantages(outcomes: torch.Tensor, turn_rewards: torch.Tensor,
                       turn_weight: float = 1.0, std_normalize: bool = True,
                       eps: float = 1e-6) -> torch.Tensor:
    """A[n, g, k] = GRPO(outcome)[n, g] + turn_weight * norm_group(turn_rewards)[n, g, k].

    Args:
        outcomes: (N, G), NaN where unjudged.
        turn_rewards: (N, G, K), NaN for missing turns or turns the evaluator abstained on.
    Returns:
        (N, G, K) per-turn advantages (the episode term alone where the turn reward is NaN).
    """
    n, g, k = turn_rewards.shape
    episode = grpo_advantages(outcomes, std_normalize, eps)  # (N, G)
    turn = _group_normalise(turn_rewards.reshape(n, g * k), std_normalize, eps)  # (N, G*K)
    return episode[:, :, None] + turn_weight * turn.reshape(n, g, k)  # (N, G, K)


def discounted_turn_returns(turn_rewards: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
    """R_k = sum_{j >= k} gamma^(j - k) r_j along the last dim; NaN (padding) counts as 0
    and stays NaN in the output. (N, G, K) -> (N, G, K)."""
    valid = ~torch.isnan(turn_rewards)
    r = torch.where(valid, turn_rewards, torch.zeros_like(turn_rewards))
    out = torch.zeros_like(r)
    running = torch.zeros_like(r[..., 0])
    for k in range(r.shape[-1] - 1, -1, -1):
        running = r[..., k] + gamma * running
        out[..., k] = running
    return torch.where(valid, out, torch.full_like(out, float("nan")))


def gigpo_step_advantages(step_returns: torch.Tensor, anchors: torch.Tensor,
                          std_normalize: bool = True, eps: float = 1e-6) -> torch.Tensor:
    """GiGPO step-level advantages: normalise returns within groups of equal anchor states.

    Args:
        step_returns: (N, G, K) discounted return from each step, NaN for padding.
        anchors: (N, G, K) integer id of the state each step started from; -1 = padding.
            Equal ids within one group n mean the same state.
    Returns:
        (N, G, K) step advantages; 0 for padding and for steps whose anchor state occurs
        only once in the group (no peer to compare against).
    """
    out = torch.zeros_like(step_returns)
    for n in range(anchors.shape[0]):
        for anchor in anchors[n].unique().tolist():
            if anchor < 0:
                continue
            members = (anchors[n] == anchor) & ~torch.isnan(step_returns[n])  # (G, K)
            if int(members.sum()) < 2:
                continue
            r = step_returns[n][members][None]  # (1, M)
            out[n][members] = _group_normalise(r, std_normalize, eps)[0]
    return out


def gigpo_advantages(outcomes: torch.Tensor, step_returns: torch.Tensor, anchors: torch.Tensor,
                     step_weight: float = 1.0, std_normalize: bool = True,
                     eps: float = 1e-6) -> torch.Tensor:
    """A = GRPO episode advantage + step_weight * GiGPO step advantage; (N, G, K)."""
    episode = grpo_advantages(outcomes, std_normalize, eps)  # (N, G)
    step = gigpo_step_advantages(step_returns, anchors, std_normalize, eps)  # (N, G, K)
    return episode[:, :, None] + step_weight * step
