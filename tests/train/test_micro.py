"""Micro-batches: whole groups packed under a token budget, and gradient accumulation
over them that reproduces the whole-batch step (SFT, RL with every aggregation, the
critic, DPO)."""

import json

import pytest
import torch

from tracerl.algorithms.losses import aggregate, loss_share
from tracerl.rollout.render import ChatRenderer
from tracerl.train.batch import TokenBatch
from tracerl.train.config import DPOConfig, RLConfig, SFTConfig
from tracerl.train.dpo import pairs_from_jsonl, train_dpo
from tracerl.train.micro import micro_batches, pack
from tracerl.train.ppo import Critic, _critic_step, _policy_step
from tracerl.train.value import ValueModel


def _pairs_file(tmp_path, n):
    lines = [json.dumps({"prompt": [{"role": "user", "content": f"Say a number {i}"}],
                         "chosen": [{"role": "assistant", "content": f"{i * 7919}"}],
                         "rejected": [{"role": "assistant", "content": "abcd"}]})
             for i in range(n)]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines))
    return path


def test_pack_fills_bins_in_order_and_isolates_oversized_items():
    assert pack([], 10) == []
    assert pack([4, 4, 4, 11, 1, 9, 1], 10) == [[0, 1], [2], [3], [4, 5], [6]]
    assert pack([10, 10], 10) == [[0], [1]]


def _batch(pad_id, sizes=(3, 1, 2), plens=(9, 5, 12), seed=1):
    """Groups of rows sharing prompts, ragged responses, right padding, holes in the loss
    mask (observation tokens), random behaviour logprobs and advantages."""
    gen = torch.Generator().manual_seed(seed)
    rows, prompt_lens = [], []
    for p, size in zip(plens, sizes, strict=True):
        prompt = torch.randint(4, 90, (p,), generator=gen).tolist()
        for _ in range(size):
            n = int(torch.randint(3, 12, (1,), generator=gen))
            rows.append(prompt + torch.randint(4, 90, (n,), generator=gen).tolist())
            prompt_lens.append(p)
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id)
    attn = torch.zeros_like(ids)
    mask = torch.zeros((len(rows), width - 1))
    for i, (r, p) in enumerate(zip(rows, prompt_lens, strict=True)):
        ids[i, :len(r)] = torch.tensor(r)
        attn[i, :len(r)] = 1
        mask[i, p - 1:len(r) - 1] = 1
        mask[i, p + 1] = 0
    old = -torch.rand(mask.shape, generator=gen) * mask
    adv = torch.randn(mask.shape, generator=gen) * mask
    return TokenBatch(ids, attn, mask, old, adv, torch.tensor(prompt_lens))


def test_groups_stay_together_and_the_budget_holds():
    batch = _batch(0, sizes=(3, 1, 2, 4), plens=(9, 5, 12, 6))
    assert [mb.rows.tolist() for mb in micro_batches(batch, 0)] == [list(range(10))]
    plens = batch.prompt_lens.tolist()
    lengths = batch.attention_mask.sum(-1).tolist()
    groups = [{0, 1, 2}, {3}, {4, 5}, {6, 7, 8, 9}]
    for budget in (20, 35, 60, 200):
        pieces = micro_batches(batch, budget)
        seen = sorted(i for mb in pieces for i in mb.rows.tolist())
        assert seen == list(range(10))  # a partition
        for mb in pieces:
            rows = mb.rows.tolist()
            assert mb.width == max(lengths[i] for i in rows)
            cost = sum(plens[min(g & set(rows))] for g in groups if g & set(rows)) + sum(
                lengths[i] - plens[i] for i in rows)
            assert cost <= budget or len(rows) == 1  # over budget: one row too long alone
            for g in groups:  # a group is split only when it does not fit alone
                whole = plens[min(g)] + sum(lengths[i] - plens[i] for i in g)
                if g & set(rows) and whole <= budget:
                    assert g <= set(rows)
    part = micro_batches(batch, 20)[0].of(batch)
    assert part.input_ids.shape[1] == int(part.attention_mask.sum(-1).max())
    assert part.loss_mask.shape[1] == part.input_ids.shape[1] - 1


def test_without_shared_prompts_every_row_counts_whole():
    batch = _batch(0, sizes=(1, 1, 1), plens=(9, 5, 12))
    lengths = batch.attention_mask.sum(-1).tolist()
    pair = min(a + b for i, a in enumerate(lengths) for b in lengths[i + 1:])
    assert [mb.rows.tolist() for mb in micro_batches(batch, pair - 1)] == [[0], [1], [2]]
    assert len(micro_batches(batch, sum(lengths))) == 1


def test_a_shared_system_prompt_counts_once_per_piece():
    """Rows of different tasks (one row per prompt, as in SFT) opening with the same
    system prompt: a piece pays for it once, so more rows fit in a budget."""
    gen = torch.Generator().manual_seed(5)
    system = torch.randint(4, 90, (40,), generator=gen).tolist()
    rows = [system + torch.randint(4, 90, (5 + i, ), generator=gen).tolist() for i in range(6)]
    plens = [len(r) for r in rows]
    rows = [r + [7] * 10 for r in rows]
    width = max(len(r) for r in rows)
    ids = torch.zeros((6, width), dtype=torch.long)
    attn = torch.zeros_like(ids)
    for i, r in enumerate(rows):
        ids[i, :len(r)], attn[i, :len(r)] = torch.tensor(r), 1
    zeros = torch.zeros((6, width - 1))
    batch = TokenBatch(ids, attn, zeros, zeros, zeros, torch.tensor(plens))
    lengths = [len(r) for r in rows]
    budget = 40 + sum(n - 40 for n in lengths[:3])  # the system prompt, then 3 rows' rest
    pieces = [mb.rows.tolist() for mb in micro_batches(batch, budget)]
    assert pieces == [[0, 1, 2], [3, 4], [5]]
    assert sum(lengths[:2]) > budget  # without the sharing not even two rows would fit


@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"])
def test_shares_reassemble_the_whole_aggregate(mode):
    gen = torch.Generator().manual_seed(0)
    loss = torch.randn(6, 9, generator=gen)
    mask = (torch.rand(6, 9, generator=gen) > 0.4).float()
    mask[4] = 0  # a row with no valid token
    whole = aggregate(loss, mask, mode)
    parts = [[0, 4], [1, 2, 5], [3]]
    total = sum(loss_share(mask[p], mask, mode) * aggregate(loss[p], mask[p], mode)
                for p in parts)
    torch.testing.assert_close(total, whole)
    with pytest.raises(ValueError, match="loss aggregation"):
        loss_share(mask, mask, "mean")


def _grads(model):
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def _close(got, want):
    assert len(got) == len(want) > 0
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, atol=3e-5, rtol=3e-4)


@pytest.mark.parametrize("agg,loss", [("token-mean", "ppo"), ("seq-mean-token-mean", "gspo"),
                                      ("seq-mean-token-sum", "cispo")])
def test_an_accumulated_policy_step_equals_the_whole_batch_step(fresh_tiny_policy, agg, loss):
    model = fresh_tiny_policy.model
    batch = _batch(fresh_tiny_policy.pad_id)
    cfg = RLConfig(loss_agg=agg, policy_loss=loss, kl_coef=0.1, temperature=0.8)
    ref = batch.old_logp - 0.05 * batch.loss_mask
    opt = torch.optim.SGD(model.parameters(), lr=0.0)  # grads stay, weights do not move
    results = []
    for tokens in (0, 25, 1):
        stats = _policy_step(model, opt, batch, batch.old_logp, None, ref, cfg, tokens)
        results.append((stats, _grads(model)))
    (want, want_g), *others = results
    for got, got_g in others:
        _close(got_g, want_g)
        for name in ("loss", "pg_loss", "kl", "grad_norm"):
            assert getattr(got, name) == pytest.approx(getattr(want, name), rel=1e-4, abs=1e-6)


def test_an_accumulated_critic_step_equals_the_whole_batch_step(fresh_tiny_policy):
    batch = _batch(fresh_tiny_policy.pad_id)
    critic_model = ValueModel(fresh_tiny_policy.model)
    gen = torch.Generator().manual_seed(3)
    returns = torch.randn(batch.loss_mask.shape, generator=gen)
    old = torch.randn(batch.loss_mask.shape, generator=gen)
    opt = torch.optim.SGD(critic_model.parameters(), lr=0.0)
    critic = Critic(critic_model, opt, returns, old)
    rows = torch.arange(len(batch))
    want = _critic_step(critic, batch, rows, RLConfig(), 0)
    want_g = _grads(critic_model)
    got = _critic_step(critic, batch, rows, RLConfig(), 20)
    assert got == pytest.approx(want, rel=1e-5)
    _close(_grads(critic_model), want_g)


def test_accumulated_sft_and_dpo_steps_equal_the_whole_batch_step(fresh_tiny_policy, tmp_path):
    from tracerl.envs.calc import CalcFamily
    from tracerl.train.sft import demonstrations, run_sft

    policy = fresh_tiny_policy
    renderer = ChatRenderer(policy.tokenizer)
    demos = demonstrations(CalcFamily(), renderer, 6, seed=0)
    cfg = SFTConfig(demos=6, batch_size=6, lr=0.0)  # lr 0: the gradient stays to compare
    want = run_sft(policy, demos, cfg, seed=0)[0].loss
    want_g = _grads(policy.model)
    got = run_sft(policy, demos, cfg, seed=0, micro_tokens=60)[0].loss
    assert got == pytest.approx(want, rel=1e-5)
    _close(_grads(policy.model), want_g)

    pairs = pairs_from_jsonl(_pairs_file(tmp_path, 5), renderer)
    dcfg = DPOConfig(pairs_from="x", lr=0.0, epochs=1, batch_size=5)
    want_d = train_dpo(policy, pairs, dcfg, seed=0)[0]
    want_g = _grads(policy.model)
    got_d = train_dpo(policy, pairs, dcfg, seed=0, micro_tokens=30)[0]
    assert got_d == pytest.approx(want_d, rel=1e-5, abs=1e-7)
    _close(_grads(policy.model), want_g)


def _positions_run(model):
    """Count the decoder positions every forward pass runs (hook on the embeddings)."""
    seen = []
    embed = model.get_input_embeddings()
    handle = embed.register_forward_hook(lambda m, args, out: seen.append(args[0].numel()))
    return seen, handle


def test_each_shared_prompt_runs_once_per_step_across_pieces(fresh_tiny_policy):
    """Groups of long prompts and short answers, a budget that puts one row in a piece:
    the per-piece path ran each prompt once per row, this runs it once per group (and
    every row's rest), with the whole batch's gradient."""
    from tracerl.train.accumulate import prompt_clusters

    model = fresh_tiny_policy.model
    batch = _batch(fresh_tiny_policy.pad_id, sizes=(4, 3), plens=(30, 24), seed=2)
    cfg = RLConfig()
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    _policy_step(model, opt, batch, batch.old_logp, None, None, cfg, 0)
    want_g = _grads(model)
    budget = 30  # a prompt and at most one row's rest
    clusters = prompt_clusters(batch, budget)
    assert clusters is not None and len(clusters) == 2
    assert [len(p.rows) for c in clusters for p in c.pieces] == [1] * 7
    seen, handle = _positions_run(model)
    try:
        _policy_step(model, opt, batch, batch.old_logp, None, None, cfg, budget)
    finally:
        handle.remove()
    _close(_grads(model), want_g)
    lengths = batch.attention_mask.sum(-1).tolist()
    prefixes = sorted(len(c.prefix) for c in clusters)
    assert prefixes == [23, 29]  # a group shares all of its prompt but the last token
    rests = sum(len(p.rows) * (p.width - len(c.prefix)) for c in clusters for p in c.pieces)
    assert sum(seen) == sum(prefixes) + rests  # each prefix once, then each piece's rests
    assert sum(seen) < 0.55 * sum(lengths)  # the per-piece path ran every whole row


def test_one_prompt_pass_under_lora_gives_the_whole_batch_gradient(lora_policy):
    policy = lora_policy
    model = policy.model
    batch = _batch(policy.pad_id, sizes=(3, 2), plens=(20, 16), seed=4)
    cfg = RLConfig(temperature=0.7)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
    _policy_step(model, opt, batch, batch.old_logp, None, None, cfg, 0)
    want_g = _grads(model)
    _policy_step(model, opt, batch, batch.old_logp, None, None, cfg, 24)
    _close(_grads(model), want_g)


def test_one_prompt_pass_on_sliding_window_layers_gives_the_whole_batch_gradient(tmp_path):
    """Gemma 3's local layers keep only the last window of the prefix's cache: the pieces
    must attend as the whole batch does (a window of 6 against 20-token prompts)."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(vocab_size=96, hidden_size=32, intermediate_size=64,
                              num_hidden_layers=4, num_attention_heads=2,
                              num_key_value_heads=1, head_dim=16, sliding_window=6,
                              layer_types=["sliding_attention", "full_attention"] * 2,
                              max_position_embeddings=256)
    model = Gemma3ForCausalLM(config).float()
    model.train()
    batch = _batch(0, sizes=(3, 2), plens=(20, 16), seed=6)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    _policy_step(model, opt, batch, batch.old_logp, None, None, RLConfig(), 0)
    want_g = _grads(model)
    _policy_step(model, opt, batch, batch.old_logp, None, None, RLConfig(), 22)
    _close(_grads(model), want_g)
