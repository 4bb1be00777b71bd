"""Generalised Advantage Estimation over multi-turn token streams, token- and turn-level.

A multi-turn trajectory interleaves sampled action tokens (mask 1) with observation
tokens written by the env (mask 0). Only action tokens are decisions, so both
estimators step over observation tokens: the value and the running advantage pass
through them unchanged (as verl does for multi-turn GAE), and the next state of the
last action token of one turn is the first action token of the next.

- `gae_advantages`: token-level GAE (Schulman et al. 2016, eq. 16) with a critic.
- `bilevel_gae_advantages`: turn-level GAE on turn rewards, then token-level GAE inside
  each turn bootstrapped from the turn's advantage (hierarchical credit as in ArCHer,
  Zhou et al. 2024, and RAGEN's bi-level GAE, Wang et al. 2025). Turn rewards (from a
  step evaluator or the env) then reach the turn that earned them directly, while the
  tokens of one turn still share a short token-level horizon.
"""

from __future__ import annotations

import torch


def gae_advantages(token_rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor,
                   gamma: float = 1.0, lam: float = 0.95) -> tuple[torch.Tensor, torch.Tensor]:
    """Token-level GAE, vectorised over the batch.

    delta_t = r_t + gamma * V(next action token) - V_t; A_t = delta_t + gamma*lam*A_next.
    The value after the last action token is 0 (the episode is over).

    Args:
        token_rewards, values, mask: (B, T).
    Returns:
        (advantages, returns), both (B, T) and 0 off the mask; returns = A + V.
    """
    m = mask.to(values.dtype)
    adv = torch.zeros_like(values)  # (B, T)
    next_value = torch.zeros_like(values[:, 0])  # (B,)
    next_adv = torch.zeros_like(values[:, 0])  # (B,)
    for t in range(values.shape[1] - 1, -1, -1):
        delta = token_rewards[:, t] + gamma * next_value - values[:, t]  # (B,)
        a = delta + gamma * lam * next_adv  # (B,)
        on = m[:, t]
        next_adv = on * a + (1 - on) * next_adv
        next_value = on * values[:, t] + (1 - on) * next_value
        adv[:, t] = a * on
    return adv, (adv + values) * m


def bilevel_gae_advantages(turn_rewards: torch.Tensor, values: torch.Tensor,
                           mask: torch.Tensor, turn_end: torch.Tensor, gamma: float = 1.0,
                           lam: float = 0.95, token_gamma: float = 1.0,
                           token_lam: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Turn-level GAE on turn rewards, then token-level GAE within each turn.

    High level, per turn k with value V_k read at its last action token:
        delta_k = R_k + gamma * V_{k+1} - V_k;  A_k = delta_k + gamma * lam * A_{k+1}.
    Low level, inside turn k: the last token's advantage is A_k; earlier tokens use
        delta_t = token_gamma * V_{t+1} - V_t;  A_t = delta_t + token_gamma*token_lam*A_{t+1}
    (no reward inside a turn). With token_gamma = token_lam = 1 every token of a turn
    gets A_k + V_k - V_t.

    Args:
        turn_rewards: (B, T), each turn's reward on its last action token (the outcome
            added to the final turn's), 0 elsewhere.
        values: (B, T) critic values; mask: (B, T) 1 on action tokens.
        turn_end: (B, T) 1 on the last action token of each turn.
    Returns:
        (advantages, returns), both (B, T) and 0 off the mask.
    """
    m = mask.to(values.dtype)
    end = turn_end.to(values.dtype) * m
    adv = torch.zeros_like(values)  # (B, T)
    zeros = torch.zeros_like(values[:, 0])  # (B,)
    next_turn_value, next_turn_adv = zeros, zeros  # high level, (B,)
    next_value, next_adv = zeros, zeros  # low level, (B,)
    for t in range(values.shape[1] - 1, -1, -1):
        v = values[:, t]
        turn_a = turn_rewards[:, t] + gamma * next_turn_value - v + gamma * lam * next_turn_adv
        token_a = token_gamma * next_value - v + token_gamma * token_lam * next_adv
        is_end, on = end[:, t], m[:, t]
        a = is_end * turn_a + (1 - is_end) * token_a  # (B,)
        next_turn_adv = is_end * turn_a + (1 - is_end) * next_turn_adv
        next_turn_value = is_end * v + (1 - is_end) * next_turn_value
        next_adv = on * a + (1 - on) * next_adv
        next_value = on * v + (1 - on) * next_value
        adv[:, t] = a * on
    return adv, (adv + values) * m
