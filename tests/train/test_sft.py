from tracerl.train.sft import cosine_lr


def test_cosine_schedule_warms_up_then_decays_to_zero():
    lrs = [cosine_lr(s, 100, 1.0) for s in range(100)]
    assert lrs[0] == 0.2 and lrs[4] == 1.0
    assert all(a >= b for a, b in zip(lrs[4:], lrs[5:], strict=False))
    assert lrs[-1] < 0.01
