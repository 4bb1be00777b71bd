"""The critic for PPO-style estimators: a value head on a copy of the policy's backbone.

A separate model rather than a head on the policy: the value loss then cannot pull the
policy's representation around (a known source of instability when sharing trunks in
language-model PPO, e.g. Ouyang et al. 2022 use a separate value model), and the
critic has its own optimizer and learning rate. It starts from the policy's weights
(after SFT, it already reads the task) with a zero-initialised head, so its first
values are 0 and warm-up (`rl.critic_warmup`) lets it fit returns before the policy
follows its advantages.

With a LoRA policy the copy keeps the adapter layers (frozen base, trainable adapter), so
the critic trains its own adapter and head; it follows the policy's autocast setting.
"""

from __future__ import annotations

import copy

import torch
from transformers import PreTrainedModel

from tracerl.policy.precision import autocast, model_autocast, set_autocast


class ValueModel(torch.nn.Module):
    """V(state) at every position of a token sequence: (B, L) -> (B, L-1)."""

    def __init__(self, policy_model: PreTrainedModel) -> None:
        super().__init__()
        self.backbone = copy.deepcopy(policy_model.get_decoder())
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
