import random

from tracerl.train.sft import cosine_lr, length_bucketed


def test_length_buckets_cover_every_demo_once_and_group_similar_lengths():
    rng = random.Random(0)
    lengths = [rng.choice([20, 200]) for _ in range(256)]
    batches = length_bucketed(lengths, batch_size=16, rng=random.Random(1))
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(256))
    mixed = sum(len({lengths[i] for i in b}) > 1 for b in batches)
    assert mixed <= 256 // (16 * 8) + 1  # at most one mixed batch per window


def test_cosine_schedule_warms_up_then_decays_to_zero():
    lrs = [cosine_lr(s, 100, 1.0) for s in range(100)]
    assert lrs[0] == 0.2 and lrs[4] == 1.0
    assert all(a >= b for a, b in zip(lrs[4:], lrs[5:], strict=False))
    assert lrs[-1] < 0.01
