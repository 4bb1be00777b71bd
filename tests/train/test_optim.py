"""The training stages' optimiser: fused AdamW takes torch's default AdamW step."""

import torch

from tracerl.train.optim import adamw


def test_adamw_is_fused_on_cpu_and_matches_the_default_step():
    torch.manual_seed(0)
    a = torch.nn.Linear(8, 4)
    b = torch.nn.Linear(8, 4)
    b.load_state_dict(a.state_dict())
    fused, plain = adamw(a.parameters(), 1e-2), torch.optim.AdamW(b.parameters(), lr=1e-2,
                                                                   weight_decay=0.0)
    assert fused.param_groups[0]["fused"]
    x = torch.randn(16, 8)
    for _ in range(3):
        for model, opt in ((a, fused), (b, plain)):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(p, q)
