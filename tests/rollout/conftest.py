import random

import pytest

from tracerl.policy.sampling import Sample


class OracleSampler:
    """Emits the oracle's actions as token ids, so episodes run several turns."""

    def __init__(self, tokenizer, family, tasks) -> None:
        self.tok = tokenizer
        self.plans = {}
        for t in tasks:
            demo = family.demonstration(t, random.Random(0))
            self.plans[t.messages[0].content] = [m.content for m in demo if m.role == "assistant"]

    def generate(self, contexts, params, budgets=None):
        out = []
        for ctx in contexts:
            text = self.tok.decode(ctx, skip_special_tokens=False)
            prompt = text.split("<|im_start|>user\n")[1].split("<|im_end|>")[0]
            turn = text.count("<|im_start|>assistant") - 1
            action = self.plans[prompt][turn]
            if "<tool_call>" not in action:
                action += "<|im_end|>"
            ids = self.tok.encode(action, add_special_tokens=False)
            out.append(Sample(ids, [0.0] * len(ids), "stop"))
        return out


@pytest.fixture
def oracle_sampler():
    """`oracle_sampler(tokenizer, family, tasks)`: a Sampler that plays the family's
    demonstrations (tool-call turns end at `</tool_call>`, answers at `<|im_end|>`)."""
    return OracleSampler
