import copy

import pytest
import torch

from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams, WeightSync
from tracerl.policy.weights import load_named, trained_weights


def test_a_synced_sampler_samples_like_the_learner(tiny_policy):
    learner = copy.deepcopy(tiny_policy.model)
    with torch.no_grad():
        for p in learner.parameters():
            p.add_(0.05 * torch.randn_like(p))
    sampler = TransformersSampler(copy.deepcopy(tiny_policy.model), tiny_policy.pad_id, seed=0)
    reference = TransformersSampler(learner, tiny_policy.pad_id, seed=0)
    assert isinstance(sampler, WeightSync)
    sampler.load_weights(trained_weights(learner))
    params = SamplingParams(1.0, 1.0, 12)
    ctx = [[5, 6, 7], [8, 9]]
    got, want = sampler.generate(ctx, params), reference.generate(ctx, params)
    assert [s.ids for s in got] == [s.ids for s in want]
    for a, b in zip(got, want, strict=True):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)


def test_only_trained_parameters_travel_and_snapshots_do_not_alias(tiny_policy):
    model = copy.deepcopy(tiny_policy.model)
    for name, p in model.named_parameters():
        p.requires_grad_("layers.0" in name)
    snap = dict(trained_weights(model))
    assert snap and all("layers.0" in n for n in snap)
    name = next(iter(snap))
    before = snap[name].clone()
    with torch.no_grad():
        dict(model.named_parameters())[name].add_(1.0)
    assert torch.equal(snap[name], before)  # the learner goes on; the snapshot does not move


def test_unknown_names_and_wrong_shapes_are_refused_before_any_copy(tiny_policy):
    model = copy.deepcopy(tiny_policy.model)
    name, p = next(iter(model.named_parameters()))
    with pytest.raises(KeyError, match="no parameter 'nope'"):
        load_named(model, [(name, torch.zeros_like(p)), ("nope", torch.zeros(1))])
    assert not torch.equal(p, torch.zeros_like(p))
    with pytest.raises(ValueError, match="has shape"):
        load_named(model, [(name, torch.zeros(3, 3, 3))])
