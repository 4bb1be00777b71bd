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
                                  [--lr LR]

With a learning rate both policies drift apart within a few steps (on SmolLM2 the
digit-fraction reward teaches short replies, and whichever side learns it first samples
fewer tokens per completion); `--lr 0` keeps the work of every step alike on both sides.

After the pair, the update's forward + backward is timed three ways (update_variants):
logits over the whole sequence (tracerl's update before), over the loss positions only,
and tracerl's update now (loss positions, each group's prompt run once).

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
from tracerl.train.batch import batch_logprobs, collate, token_logprobs
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
      whole sequence     token_logprobs over every position (tracerl before 38e74f6+1);
      loss positions     only the completion's positions projected to the vocabulary
                         (`where=`; TRL's logits_to_keep does the like on GPUs);
      + prompt once      tracerl's update now (batch_logprobs): also each group's prompt
                         run once, its KV cache (with gradients) repeated for the group.
    """
    model = side.policy.model
    trajs = [t for g in side.runner.run(side.family.tasks("train", side.cfg.rl.tasks_per_step, 0))
             for t in g.trajectories]
    batch = collate(trajs, side.policy.pad_id)
    where = batch.loss_mask > 0

    def whole() -> torch.Tensor:
        return token_logprobs(model, batch.input_ids, batch.attention_mask) * batch.loss_mask

    fns = {"whole sequence": whole,
           "loss positions": lambda: token_logprobs(model, batch.input_ids,
                                                    batch.attention_mask, where=where),
           "+ prompt once per group": lambda: batch_logprobs(model, batch)}
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
    prompts = len({tuple(t.prompt_ids) for t in trajs})
    print(f"  update forward+backward on {len(trajs)} x {batch.input_ids.shape[1]} tokens "
          f"({prompts} prompts of <= {max(len(t.prompt_ids) for t in trajs)} tokens), "
          f"median of {reps}:")
    for name, ts in times.items():
        t = statistics.median(ts)
        print(f"    {name:24s} {t:7.3f} s  ({base / t:.2f}x)")
    with torch.no_grad():  # the same numbers
        diff = (whole() - batch_logprobs(model, batch)).abs().max()
    print(f"    batch_logprobs vs whole sequence: max |log-prob difference| {diff:.1e}")


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
    ap.add_argument("--lr", type=float,
                    help="learning rate of both sides (default per model); 0 keeps both "
                         "policies at the starting weights, so completions stay alike in "
                         "length and the comparison is of the systems alone")
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
        s = Setting(args.tasks or d.tasks, args.group or d.group, args.tokens or d.tokens,
                    d.lr if args.lr is None else args.lr)
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
