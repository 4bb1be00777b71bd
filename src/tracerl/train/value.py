"""The critic for PPO-style estimators: a value head on a copy of the policy's backbone.

A separate model rather than a head on the policy: the value loss then cannot pull the
policy's representation around (a known source of instability when sharing trunks in
language-model PPO, e.g. Ouyang et al. 2022 use a separate value model), and the
critic has its own optimizer and learning rate. It starts from the policy's weights
(after SFT, it already reads the task) with a zero-initialised head, so its first
values are 0 and warm-up (`rl.critic_warmup`) lets it fit returns before the policy
follows its advantages.

With a LoRA policy the copy keeps the adapter layers, so the critic trains its own
adapter and head, and it shares the frozen base weights with the policy instead of
copying them (`copy_sharing_frozen`): policy, reference (the disabled adapter,
tracerl.train.reference) and critic hold one copy of the base. Nothing updates a frozen
weight inside a stage (the adapter is folded into the base only between stages, and each
RL stage builds its critic anew). On SmolLM2-135M that saves the 135M-parameter copy the
critic used to hold; on Gemma 3 270M, 268M (more than half of them the 262k x 640
embedding). Without LoRA every weight trains, so the critic copies them all. The critic
follows the policy's autocast setting.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from transformers import PreTrainedModel

from tracerl.policy.precision import autocast, model_autocast, set_autocast


def copy_sharing_frozen(module: torch.nn.Module) -> torch.nn.Module:
    """A deep copy of `module` whose frozen parameters (requires_grad False) are the
    originals, not copies; trainable parameters and buffers are copied."""
    memo: dict[int, Any] = {id(p): p for p in module.parameters() if not p.requires_grad}
    return copy.deepcopy(module, memo)


class ValueModel(torch.nn.Module):
    """V(state) at every position of a token sequence: (B, L) -> (B, L-1)."""

    def __init__(self, policy_model: PreTrainedModel) -> None:
        super().__init__()
        self.backbone = copy_sharing_frozen(policy_model.get_decoder())
        hidden = policy_model.config.hidden_size
        self.head = torch.nn.Linear(hidden, 1)
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)
        set_autocast(self, model_autocast(policy_model))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Values aligned with TokenBatch columns: column j is the state that predicts
        token j+1 (the hidden state at position j)."""
        with autocast(self):
            hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask,
                                   use_cache=False).last_hidden_state  # (B, L, H)
        return self.head(hidden[:, :-1].float()).squeeze(-1)  # (B, L-1)
