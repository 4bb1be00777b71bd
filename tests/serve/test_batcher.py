import asyncio

import pytest

from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams
from tracerl.serve.batcher import Batcher


def sampler(policy):
    return TransformersSampler(policy.model, policy.pad_id, seed=0, tokenizer=policy.tokenizer)


def test_concurrent_requests_share_sampler_calls(tiny_policy):
    batcher = Batcher(sampler(tiny_policy), max_rows=64)
    params = SamplingParams(max_new_tokens=5)
    cool = SamplingParams(temperature=0.5, max_new_tokens=3)

    async def run():
        jobs = [batcher.generate([1, 2, i + 3], params, n=1 + i % 2) for i in range(10)]
        jobs.append(batcher.generate([4, 5], cool, n=2))
        return await asyncio.gather(*jobs)

    results = asyncio.run(run())
    assert [len(samples) for samples, _ in results] == [1, 2] * 5 + [2]
    assert all(len(s.ids) <= 5 for samples, _ in results[:10] for s in samples)
    assert all(len(s.ids) <= 3 for s in results[10][0])
    # one call for the ten requests sampled alike, one for the other settings
    assert batcher.stats.sampler_calls == 2 and batcher.stats.rows == 17
    assert batcher.stats.max_rows == 15
    batcher.close()


def test_max_rows_splits_batches(tiny_policy):
    batcher = Batcher(sampler(tiny_policy), max_rows=4)

    async def run():
        return await asyncio.gather(*(batcher.generate([1, 2], SamplingParams(max_new_tokens=2),
                                                       n=2) for _ in range(5)))

    asyncio.run(run())
    assert batcher.stats.max_rows == 4 and batcher.stats.sampler_calls == 3
    batcher.close()


class Failing:
    def generate(self, contexts, params, budgets=None):
        raise RuntimeError("out of memory")


def test_a_failing_batch_fails_its_requests_and_the_batcher_goes_on():
    batcher = Batcher(Failing())

    async def run():
        with pytest.raises(RuntimeError, match="out of memory"):
            await batcher.generate([1], SamplingParams())
        with pytest.raises(RuntimeError):
            await batcher.generate([1], SamplingParams())

    asyncio.run(run())
    assert len(batcher.stats.errors) == 2
    batcher.close()
