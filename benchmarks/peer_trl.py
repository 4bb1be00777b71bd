"""tracerl against TRL's GRPOTrainer: one single-turn GRPO step, same model, same work.

Both sides start from the same weights (two copies of one local model directory) and
train on the same prompts ("Say a number i", every prompt in every step), with the same
group size, completion budget, reward (fraction of digits in the reply), lr, AdamW
(no weight decay), grad clip 1.0, clip 0.2 / 0.28, token-mean loss, group-std
advantages, temperature 1, no top-k / top-p, no KL (TRL beta=0, no reference model),
one optimiser step per rollout batch, fp32 and the same torch thread count.

tracerl runs its real RL path: build_runner, RLStep and rl_step over a TaskListFamily
(drop_uniform_groups off, so both sides train on every sample). TRL runs
GRPOTrainer.train(); a callback runs one tracerl step after each TRL step, so the two
alternate step by step in one process and machine load hits both alike. A TRL step is
the time between two of its on_step_end callbacks minus the tracerl step run inside the
first. The first step of each side (warm-up) is excluded.

    python benchmarks/peer_trl.py [--steps 6] [--threads N] [--model DIR] [--only tiny|real]

After the pair, the update's forward + backward is timed three ways (update_variants):
logits over the whole sequence (tracerl), over the completion only (TRL on GPUs), and
each group's prompt run once (a proposal).

Models: a tiny Qwen2 built locally (benchmarks/local_models.py) and SmolLM2-135M when its
directory exists (default ~/.cache/tracerl/models/smollm2-135m; --model DIR).
The last line is the tracerl/TRL ratio of completions per second on the last model run.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch
from local_models import absent, model_dirs

from tracerl.envs import TaskListFamily, ToolEnv
from tracerl.policy.model import load_policy
from tracerl.train.batch import collate, token_logprobs
from tracerl.train.config import RLConfig, TrainConfig
from tracerl.train.optim import adamw
from tracerl.train.rl_step import RLStep
from tracerl.train.runner import build_runner
from tracerl.train.step import rl_step
from tracerl.train.threads import choose_threads
from tracerl.types import Message, Task, Trajectory


@dataclass(frozen=True)
class Setting:
    tasks: int
    """Prompts per step (each sampled `group` times)."""
    group: int
    tokens: int
    """Max completion tokens."""
    lr: float = 1e-4


DEFAULTS = {"qwen2-tiny": Setting(tasks=8, group=8, tokens=32),
            "real": Setting(tasks=2, group=4, tokens=24)}


def digit_fraction(text: str) -> float:
    text = text.replace("<|im_end|>", "").strip()
    return sum(c.isdigit() for c in text) / max(1, len(text))


class DigitReward:
    """tracerl's side of the reward: the reply's digit fraction."""

    name = "digits"

    def __call__(self, t: Trajectory) -> float:
        return digit_fraction(t.turns[0].info["content"])


def trl_digits(completions, **_) -> list[float]:
    """TRL's side of the same reward (conversational completions)."""
    return [digit_fraction(c[0]["content"]) for c in completions]


def prompts(n: int) -> list[str]:
    return [f"Say a number {i}" for i in range(n)]


class TracerlSide:
    """tracerl's RL path, one `step()` per call."""

    def __init__(self, path: Path, s: Setting, seed: int) -> None:
        self.policy = load_policy(path)
        train = [Task(f"p{i}", (Message("user", p),)) for i, p in enumerate(prompts(s.tasks))]
        held = [Task("heldout", (Message("user", "Say a number"),))]
        self.family = TaskListFamily(lambda: ToolEnv([]), train, held, DigitReward(), "digits")
        rl = RLConfig(lr=s.lr, tasks_per_step=s.tasks, group_size=s.group, max_turns=1,
                      max_turn_tokens=s.tokens, max_response_tokens=s.tokens,
                      temperature=1.0, top_p=1.0, clip_low=0.2, clip_high=0.28,
                      drop_uniform_groups=False, kl_coef=0.0)
        self.cfg = TrainConfig(rl=rl, stages=["rl"], seed=seed)
        self.runner = build_runner(self.cfg, self.policy, self.family)
        self.learner = RLStep(self.policy, self.cfg, self.family, self.runner)
        self.opt = adamw(self.policy.model.parameters(), s.lr)  # what `tracerl train` uses
        self.n = 0
        self.seconds: list[float] = []
        self.tokens: list[int] = []

    def step(self) -> None:
        t0 = time.perf_counter()
        out = rl_step(self.learner, self.runner, self.family, self.opt, self.n)
        self.seconds.append(time.perf_counter() - t0)
        self.tokens.append(sum(t.num_action_tokens for t in out.trajectories))
        self.n += 1


def run_pair(path: Path, s: Setting, steps: int, seed: int, out: Path,
             update_reps: int) -> tuple[float, float]:
    """Interleaved TRL and tracerl steps; returns (tracerl, trl) completions per second."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    ours = TracerlSide(path, s, seed)
    marks: dict[str, float] = {}
    trl_seconds: list[float] = []
    trl_len: list[float] = []

    class Alternate(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            marks["t"] = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            trl_seconds.append(time.perf_counter() - marks["t"])
            trl_len.append(trainer._metrics["train"]["completions/mean_length"][-1])
            assert torch.get_num_threads() == threads
            ours.step()
            marks["t"] = time.perf_counter()

    threads = torch.get_num_threads()
    cfg = GRPOConfig(
        output_dir=str(out / "trl"), max_steps=steps, per_device_train_batch_size=s.tasks * s.group,
        gradient_accumulation_steps=1, num_generations=s.group, steps_per_generation=1,
        num_iterations=1, max_completion_length=s.tokens, temperature=1.0, top_p=1.0, top_k=0,
        learning_rate=s.lr, lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
        max_grad_norm=1.0, epsilon=0.2, epsilon_high=0.28, beta=0.0, loss_type="dapo",
        scale_rewards="group", shuffle_dataset=False, use_cpu=True, bf16=False, fp16=False,
        report_to="none", save_strategy="no", logging_steps=10**6, seed=seed,
        dataloader_num_workers=0, disable_tqdm=True)
    ds = Dataset.from_list([{"prompt": [{"role": "user", "content": p}]} for p in prompts(s.tasks)])
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32),
        reward_funcs=trl_digits, args=cfg, train_dataset=ds,
        processing_class=AutoTokenizer.from_pretrained(str(path)), callbacks=[Alternate()])
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    n = s.tasks * s.group
    ours_s, trl_s = statistics.mean(ours.seconds[1:]), statistics.mean(trl_seconds[1:])
    ours_len = statistics.mean(ours.tokens[1:]) / n
    print(f"  TRL GRPOTrainer: {trl_s:6.2f} s/step  {n / trl_s:7.2f} completions/s  "
          f"(mean completion {statistics.mean(trl_len[1:]):.1f} tokens; steps "
          f"{' '.join(f'{x:.2f}' for x in trl_seconds)})")
    print(f"  tracerl        : {ours_s:6.2f} s/step  {n / ours_s:7.2f} completions/s  "
          f"(mean completion {ours_len:.1f} tokens; steps "
          f"{' '.join(f'{x:.2f}' for x in ours.seconds)})")
    if update_reps:
        update_variants(ours, update_reps)
    return n / ours_s, n / trl_s


def update_variants(side: TracerlSide, reps: int) -> None:
    """Forward + backward of the update's log-probs on one rollout batch, three ways
    (interleaved; the same loss, token-mean over the completion tokens):
      whole sequence     tracerl's token_logprobs: logits at every position;
      completion only    logits at the completion positions only (transformers'
                         logits_to_keep, which TRL asks for on GPUs);
      prompt once/group  each group's shared prompt run once, its KV cache (with grad)
                         repeated for the group's samples, then the completions: a
                         proposal for train/batch.py, not what tracerl does today.
    """
    model = side.policy.model
    trajs = [t for g in side.runner.run(side.family.tasks("train", side.cfg.rl.tasks_per_step, 0))
             for t in g.trajectories]
    batch = collate(trajs, side.policy.pad_id)
    width = batch.input_ids.shape[1]
    keep = width - min(len(t.prompt_ids) for t in trajs) + 1
    shared = SharedPrompt(trajs, side.policy.pad_id)

    def whole() -> torch.Tensor:
        return token_logprobs(model, batch.input_ids, batch.attention_mask) * batch.loss_mask

    def completion_only() -> torch.Tensor:
        logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                       logits_to_keep=keep).logits[:, :-1].float()  # (B, K-1, V)
        targets = batch.input_ids[:, -keep + 1:]  # (B, K-1)
        picked = logits.gather(-1, targets[..., None]).squeeze(-1)
        return (picked - torch.logsumexp(logits, dim=-1)) * batch.loss_mask[:, -keep + 1:]

    fns = {"whole sequence": whole, "completion only": completion_only,
           "prompt once per group": lambda: shared.logprobs(model)}
    times: dict[str, list[float]] = {k: [] for k in fns}
    tokens = batch.loss_mask.sum()
    model.train()
    for r in range(reps + 1):
        for name in list(fns) if r % 2 else list(fns)[::-1]:
            t0 = time.perf_counter()
            (-fns[name]().sum() / tokens).backward()
            model.zero_grad(set_to_none=True)
            if r:
                times[name].append(time.perf_counter() - t0)
    base = statistics.median(times["whole sequence"])
    print(f"  update forward+backward on {len(trajs)} x {width} tokens ({len(shared.prompts)} "
          f"prompts of <= {shared.prompt_ids.shape[1]} tokens), median of {reps}:")
    for name, ts in times.items():
        t = statistics.median(ts)
        print(f"    {name:22s} {t:7.3f} s  ({base / t:.2f}x)")
    with torch.no_grad():  # the proposal computes the same numbers
        w, ref = whole(), torch.zeros_like(shared.loss_mask)  # (B, L-1), (B, C)
        for i, t in enumerate(trajs):
            row = w[i, len(t.prompt_ids) - 1:][:ref.shape[1]]
            ref[i, :len(row)] = row
        diff = (ref - shared.logprobs(model)).abs().max()
    print(f"    prompt once per group vs whole sequence: max |log-prob difference| {diff:.1e}")


class SharedPrompt:
    """A batch split into its distinct prompts (left-padded) and every sample's response
    (right-padded), for computing the log-probs with each prompt run once."""

    def __init__(self, trajs: list[Trajectory], pad: int) -> None:
        index: dict[tuple[int, ...], int] = {}
        self.group = torch.tensor([index.setdefault(tuple(t.prompt_ids), len(index))
                                   for t in trajs])  # (B,) row -> its prompt
        self.prompts = list(index)
        self.prompt_ids, self.prompt_mask = _pad([list(p) for p in self.prompts], pad, left=True)
        self.response_ids, self.response_mask = _pad([t.response_ids() for t in trajs], pad)
        self.loss_mask = _pad([t.loss_mask() for t in trajs], 0)[0].float()  # (B, C)

    def logprobs(self, model) -> torch.Tensor:
        """(B, C) log-probs of the response tokens, times the loss mask."""
        pmask, g = self.prompt_mask, self.group
        out = model(input_ids=self.prompt_ids, attention_mask=pmask,
                    position_ids=(pmask.cumsum(-1) - 1).clamp(min=0), use_cache=True)
        cache = out.past_key_values
        for layer in cache.layers:  # (U, h, P, d) -> (B, h, P, d), gradients flow back
            layer.keys, layer.values = layer.keys[g], layer.values[g]
        c = self.response_ids.shape[1]
        positions = pmask.sum(-1)[g][:, None] + torch.arange(c)[None]  # (B, C)
        out2 = model(input_ids=self.response_ids, position_ids=positions, cache=cache,
                     attention_mask=torch.cat([pmask[g], self.response_mask], 1), use_cache=True)
        logits = torch.cat([out.logits[:, -1:][g], out2.logits[:, :-1]], 1).float()  # (B, C, V)
        picked = logits.gather(-1, self.response_ids[..., None]).squeeze(-1)  # (B, C)
        return (picked - torch.logsumexp(logits, dim=-1)) * self.loss_mask


def _pad(rows: list[list[int]], pad: int, left: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        cols = slice(width - len(r), width) if left else slice(0, len(r))
        ids[i, cols] = torch.tensor(r)
        mask[i, cols] = 1
    return ids, mask


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=6, help="steps per side (the first excluded)")
    ap.add_argument("--threads", type=int, default=0,
                    help="torch threads on both sides (0: tracerl's automatic choice)")
    ap.add_argument("--update-reps", type=int, default=3,
                    help="repetitions of the update log-prob variants probe (0: off)")
    ap.add_argument("--model", help="the real model's directory (default: tracerl's smollm2-135m)")
    ap.add_argument("--only", choices=["tiny", "real"])
    ap.add_argument("--tasks", type=int, help="prompts per step (default per model)")
    ap.add_argument("--group", type=int, help="group size (default per model)")
    ap.add_argument("--tokens", type=int, help="max completion tokens (default per model)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(choose_threads(args.threads).threads)
    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    tmp = Path(tempfile.mkdtemp())
    print(f"threads {torch.get_num_threads()}, load average at start "
          f"{os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    ratio = None
    for name, path in model_dirs(tmp, args.model):
        tiny = name == "qwen2-tiny"
        if args.only and args.only != ("tiny" if tiny else "real"):
            continue
        if path is None:
            print(f"{name}: {absent(args.model)}")
            continue
        d = DEFAULTS["qwen2-tiny" if tiny else "real"]
        s = Setting(args.tasks or d.tasks, args.group or d.group, args.tokens or d.tokens, d.lr)
        print(f"{name}: {s.tasks} prompts x G={s.group}, <= {s.tokens} completion tokens, "
              f"{args.steps} steps per side (first excluded)")
        ours, trl = run_pair(path, s, args.steps, args.seed, tmp / name, args.update_reps)
        ratio = ours / trl
        print(f"  {name} tracerl/trl completions per second: {ratio:.2f}x")
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    if ratio is not None:
        print(f"tracerl/trl completions per second: {ratio:.2f}x")


if __name__ == "__main__":
    main()
