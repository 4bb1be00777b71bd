"""Torch thread count on a shared machine: how fast the tiny policy trains and samples
with 1 thread, with every core, and with tracerl's auto choice, on a quiet machine and
beside a competing busy process, in one run.

    python benchmarks/threads.py [--reps 3] [--steps 20]

Each measurement is a fresh child process (thread settings are per process and OpenMP
reads OMP_WAIT_POLICY at start), doing `--steps` forward+backward passes of the default
tiny policy on a batch of 16 x 128 tokens and `--steps` batched sampling calls. The
competitor is one pure-Python busy loop per core the test asks for (what "other work on
the machine" looks like to OpenMP). Conditions take turns rep by rep, so drift in the
machine's speed hits all of them alike. Ratios are against 1 thread in the same
condition.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, os, sys, time
import torch
threads = int(sys.argv[1]); steps = int(sys.argv[2])
if threads:
    torch.set_num_threads(threads)
from tracerl.policy.model import load_policy, write_tiny
from tracerl.policy.tiny import TinySpec
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams
import tempfile
policy = load_policy(write_tiny(tempfile.mkdtemp(), TinySpec(), 0))
model = policy.model
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(5, 90, (16, 128))
def train_step():
    out = model(input_ids=ids, labels=ids)
    opt.zero_grad(); out.loss.backward(); opt.step()
sampler = TransformersSampler(model, policy.pad_id, seed=0)
contexts = [list(range(5, 45)) for _ in range(32)]
params = SamplingParams(1.0, 1.0, 32, ())
train_step(); sampler.generate(contexts[:4], params)  # warm-up
t0 = time.perf_counter()
for _ in range(steps):
    train_step()
train_s = time.perf_counter() - t0
t0 = time.perf_counter()
for _ in range(max(1, steps // 4)):
    sampler.generate(contexts, params)
sample_s = time.perf_counter() - t0
print(json.dumps({"train_s": train_s, "sample_s": sample_s,
                  "threads": torch.get_num_threads()}))
"""

BUSY = "while True: pass"


def run_child(threads: int, steps: int, env_extra: dict[str, str]) -> dict[str, float]:
    env = {**os.environ, **env_extra}
    out = subprocess.run([sys.executable, "-c", CHILD, str(threads), str(steps)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    settings = {"1 thread": (1, {}), f"{cores} threads (torch default)": (0, {}),
                f"{cores} threads, OMP_WAIT_POLICY=PASSIVE": (0, {"OMP_WAIT_POLICY": "PASSIVE"})}
    conditions = {"quiet": 0, "beside 1 busy process": 1}
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    print(f"cores: {cores}; load before: {os.getloadavg()[0]:.2f}")
    for rep in range(args.reps):
        for cond, busy in conditions.items():
            competitors = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(busy)]
            time.sleep(0.5 if busy else 0.0)
            try:
                names = list(settings)
                for name in names[rep % len(names):] + names[:rep % len(names)]:
                    threads, env = settings[name]
                    results.setdefault((cond, name), []).append(
                        run_child(threads, args.steps, env))
            finally:
                for p in competitors:
                    p.kill()
                    p.wait()
    for cond in conditions:
        base = results[(cond, "1 thread")]
        base_train = statistics.median(r["train_s"] for r in base)
        base_sample = statistics.median(r["sample_s"] for r in base)
        print(f"\n{cond}: median of {args.reps} (train = {args.steps} fwd+bwd of 16x128, "
              f"sample = {max(1, args.steps // 4)} x 32 rows x 32 tokens)")
        for name in settings:
            rs = results[(cond, name)]
            tr = statistics.median(r["train_s"] for r in rs)
            sa = statistics.median(r["sample_s"] for r in rs)
            print(f"  {name:42s} train {tr:6.2f} s ({base_train / tr:4.2f}x)   "
                  f"sample {sa:6.2f} s ({base_sample / sa:4.2f}x)")


if __name__ == "__main__":
    main()
