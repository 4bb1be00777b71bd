"""vLLM rollouts on one GPU against the transformers sampler, with SmolLM2-135M-Instruct.

Run by benchmarks/gpu_vllm.sh on a GPU machine (it installs what is missing first); each
phase prints its figures and merges them into one JSON file (--out):

  throughput  sampled tokens per second of both samplers on the same GPU, same prompts:
              `decode` (128 prompts x 256 new tokens, no stops) and `rollout` (real calc
              episodes through the RolloutRunner, multi-turn, stops and tools)
  mismatch    |log p_learner - log p_vllm| on the same sampled tokens (calc rollouts by
              the bf16 engine, the float32 learner recomputing them): what rl.tis_cap
              corrects (the table of benchmarks/bf16_mismatch.py)
  train       `tracerl train examples/smollm2-calc.yaml` with sampler.backend=vllm on the
              GPU (LoRA: adapter-only syncs) for --steps RL steps; held-out success before
              and after, and the mean step time split into rollout, update and sync

    python benchmarks/gpu_vllm.py --phase throughput --out gpu_vllm.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from bf16_mismatch import deltas  # noqa: E402

from tracerl.policy.model import Policy, load_policy  # noqa: E402
from tracerl.policy.sampler import TransformersSampler  # noqa: E402
from tracerl.policy.sampler_settings import SamplerSettings  # noqa: E402
from tracerl.policy.sampling import Sampler, SamplingParams  # noqa: E402
from tracerl.policy.weight_sync import EngineSync  # noqa: E402
from tracerl.rollout.render import ChatRenderer  # noqa: E402
from tracerl.train import configlib  # noqa: E402
from tracerl.train.config import TrainConfig  # noqa: E402
from tracerl.train.runner import build_runner, build_task_family  # noqa: E402
from tracerl.types import Message  # noqa: E402

EXAMPLE = Path(__file__).parent.parent / "examples" / "smollm2-calc.yaml"
ENGINE = SamplerSettings(backend="vllm", gpu_memory_utilization=0.35, max_model_len=2048)


def _merge(out: Path, key: str, figures: dict) -> None:
    data = json.loads(out.read_text()) if out.is_file() else {}
    data[key] = figures
    out.write_text(json.dumps(data, indent=2))
    print(json.dumps({key: figures}, indent=2), flush=True)


def _timed(sampler: Sampler, contexts: list[list[int]], params: SamplingParams) -> dict:
    sampler.generate(contexts[:8], params)  # warm-up (CUDA graphs, caches)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    samples = sampler.generate(contexts, params)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    tokens = sum(len(s.ids) for s in samples)
    return {"tokens": tokens, "seconds": round(seconds, 3), "tok_s": round(tokens / seconds, 1)}


def _rollout(cfg: TrainConfig, policy: Policy, sampler: Sampler, tasks: int) -> dict:
    family = build_task_family(cfg)
    runner = build_runner(cfg, policy, family, sampler)
    runner.run(family.tasks("train", 2, seed=1))  # warm-up
    runner.run(family.tasks("train", tasks, seed=0))
    s = runner.stats
    return {"episodes": s.trajectories, "tokens": s.sampled_tokens,
            "sample_seconds": round(s.sample_seconds, 3),
            "tok_s": round(s.sampled_tokens / max(s.sample_seconds, 1e-9), 1)}


def _engine(policy: Policy):
    from tracerl.policy.vllm_sampler import VLLMSampler

    t0 = time.perf_counter()
    sampler = VLLMSampler.for_policy(policy, ENGINE, seed=0)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    EngineSync(sampler).push(policy.model, everything=True)
    return sampler, round(built, 1), round(time.perf_counter() - t0, 3)


def throughput(cfg: TrainConfig, out: Path) -> None:
    policy = load_policy(cfg.model, "cuda")
    renderer = ChatRenderer(policy.tokenizer)
    asks = [f"Write a short story about the number {i}." for i in range(128)]
    contexts = [renderer.prompt_ids([Message("user", a)]) for a in asks]
    decode = SamplingParams(temperature=1.0, max_new_tokens=256)  # no stops: full budgets
    hf = TransformersSampler(policy.model, policy.pad_id, seed=0, tokenizer=policy.tokenizer)
    figures = {"transformers": {"decode": _timed(hf, contexts, decode),
                                "rollout": _rollout(cfg, policy, hf, 16)}}
    vllm, init_s, sync_s = _engine(policy)
    figures["vllm"] = {"engine_init_s": init_s, "full_sync_s": sync_s,
                       "decode": _timed(vllm, contexts, decode),
                       "rollout": _rollout(cfg, policy, vllm, 16)}
    for kind in ("decode", "rollout"):
        figures[f"{kind}_speedup"] = round(
            figures["vllm"][kind]["tok_s"] / figures["transformers"][kind]["tok_s"], 2)
    _merge(out, "throughput", figures)
    _merge(out, "mismatch", mismatch(cfg, policy, vllm))


def mismatch(cfg: TrainConfig, policy: Policy, sampler: Sampler) -> dict:
    tasks = build_task_family(cfg).tasks("heldout", 16, seed=cfg.seed)
    d = deltas(policy, cfg, policy.model, tasks, sampler)
    return {"engine_dtype": ENGINE.dtype, "learner_dtype": "float32", "tokens": d.numel(),
            "mean_abs": round(d.mean().item(), 5), "p99_abs": round(d.quantile(0.99).item(), 5),
            "max_abs": round(d.max().item(), 5),
            "ratio_outside_0.2": round(((d.exp() - 1).abs() > 0.2).float().mean().item(), 4)}


def train(steps: int, out: Path, run_root: Path) -> None:
    from tracerl.train.trainer import Trainer

    cfg = configlib.load(TrainConfig, str(EXAMPLE), [
        "device=cuda", "sampler.backend=vllm", f"rl.steps={steps}", "eval.tasks=64",
        f"out_dir={run_root}", "name=gpu-vllm", "log.progress_every_s=15",
        f"sampler.gpu_memory_utilization={ENGINE.gpu_memory_utilization}"])
    t0 = time.perf_counter()
    summary = Trainer(cfg, overwrite=True).run()
    wall = time.perf_counter() - t0
    rows = [json.loads(line) for line in (run_root / "gpu-vllm" / "metrics.jsonl").open()]
    rl = [r for r in rows if r.get("stage") == "rl"]

    def mean(key: str) -> float:
        values = [r[key] for r in rl if key in r]
        return round(statistics.mean(values), 3) if values else float("nan")

    _merge(out, "train", {
        "steps": summary.steps, "wall_s": round(wall, 1),
        "success_before": summary.success_before, "success_after": summary.success_after,
        "heldout_tasks": cfg.eval.tasks, "lora_r": cfg.lora.r,
        "step_s": {k: mean(k) for k in ("rollout_s", "update_s", "sync_s")},
        "sample_tok_s": mean("sample_tok_s")})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phase", choices=["throughput", "train"], required=True,
                    help="throughput also measures the log-prob mismatch (same engine)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--runs", type=Path, default=Path("runs"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_vllm.py needs a CUDA GPU")
    cfg = configlib.load(TrainConfig, str(EXAMPLE), ["device=cuda"])
    if args.phase == "throughput":
        throughput(cfg, args.out)
    else:
        train(args.steps, args.out, args.runs)


if __name__ == "__main__":
    main()
