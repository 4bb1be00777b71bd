"""rl.mode=async through the CLI: a killed run resumes without repeating or losing a
group, with its version counter, figures and traces."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracerl.cli import main
from tracerl.trace import conventions as c
from tracerl.trace.store import TraceStore
from tracerl.train import configlib
from tracerl.train.async_loop import BUFFER_FILE, STATE_FILE, AsyncRL
from tracerl.train.checkpoint import latest_checkpoint
from tracerl.train.config import TrainConfig

TINY = ["tiny.hidden_size=32", "tiny.layers=1", "tiny.heads=2", "tiny.intermediate_size=64",
        "sft.demos=16", "sft.batch_size=8", "rl.tasks_per_step=2", "rl.group_size=2",
        "rl.max_turn_tokens=16", "rl.max_response_tokens=64", "eval.tasks=2",
        "log.progress=false", "log.tensorboard=false", "rl.mode=async", "rl.tis_cap=2",
        "rl.drop_uniform_groups=false"]


def _children(pid: int) -> list[int]:
    """Live child processes of `pid` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def _records(run: Path, stage: str = "rl") -> list[dict]:
    rows = map(json.loads, (run / "metrics.jsonl").read_text().splitlines())
    return [r for r in rows if r["stage"] == stage]


def _accounted(run: Path) -> tuple[dict, list[int]]:
    """The final async state and every index it accounts for (buffered ones included)."""
    state, buffered = AsyncRL.load(latest_checkpoint(run))
    assert state is not None
    d = state.__dict__
    every = d["trained"] + d["stale"] + d["lost"] + d["requeue"] + [f.index for f in buffered]
    return d, every


@pytest.mark.slow
def test_a_killed_async_run_resumes_without_repeating_or_losing_a_group(tmp_path):
    run = tmp_path / "k"
    args = ["train", f"out_dir={tmp_path}", "name=k", *TINY, "rl.steps=400",
            "log.checkpoint_every=2", "trace.enabled=false", "task.calc.tool_latency=20"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "tracerl.cli", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 240
        while time.time() < deadline:
            ck = latest_checkpoint(run) if run.exists() else None
            if ck is not None and ck.name.startswith("stage1-step") and \
                    int(ck.name[-6:]) >= 4 and (ck / STATE_FILE).is_file():
                break
            time.sleep(0.2)
        workers = _children(proc.pid)
        proc.send_signal(signal.SIGKILL)  # no handler, no final checkpoint
    finally:
        proc.wait(30)
    assert workers  # the rollout worker process
    deadline = time.time() + 30
    while time.time() < deadline and any(Path(f"/proc/{w}").exists() for w in workers):
        time.sleep(0.2)
    assert not any(Path(f"/proc/{w}").exists() for w in workers)  # no orphan worker
    killed = latest_checkpoint(run)
    assert killed is not None and (killed / BUFFER_FILE).is_file()
    before, _ = AsyncRL.load(killed)
    saved = tmp_path / "at-kill"
    shutil.copytree(killed, saved)
    steps_done = int(killed.name[-6:])
    assert main(["train", "--resume", str(run), f"rl.steps={steps_done + 4}",
                 "trace.enabled=true", "rl.tis_level=sequence"]) == 0
    state, every = _accounted(run)
    assert state["version"] == steps_done + 4  # the version counter went on
    assert state["trained"][:len(before.trained)] == before.trained
    assert len(state["trained"]) == (steps_done + 4) * 2
    assert len(every) == len(set(every))  # no group trained, dropped or kept twice
    assert sorted(every) == list(range(state["next_index"]))  # and none skipped
    rl = _records(run)
    assert [r["step"] for r in rl] == list(range(1, steps_done + 5))
    assert [r["policy_version"] for r in rl] == [float(v) for v in range(1, steps_done + 5)]
    assert all(0 <= r["staleness_mean"] <= r["staleness_max"] <= 2 for r in rl)
    assert all(0 < r["tis_weight"] <= 2 and 0 <= r["tis_clip_fraction"] <= 1 for r in rl)
    assert all(r["lost_groups"] == 0 and r["buffer_groups"] <= 4 for r in rl)
    with TraceStore(run / "traces.sqlite") as store:  # the resumed steps were traced
        turns = [s for s in store.all_spans() if s.kind == c.LLM]
    assert turns and all(c.RL_POLICY_VERSION in s.attributes for s in turns)
    assert max(s.attributes[c.RL_POLICY_VERSION] for s in turns) >= steps_done


def test_async_settings_are_checked():
    load = configlib.load
    assert load(TrainConfig, None, []).rl.mode == "sync"  # the default run is unchanged
    assert load(TrainConfig, None, ["rl.mode=async"]).rl.buffer_capacity == 16
    with pytest.raises(configlib.ConfigError, match="buffer_groups must be 0 or >="):
        load(TrainConfig, None, ["rl.buffer_groups=3"])
    with pytest.raises(configlib.ConfigError, match="max_staleness must be >= 0"):
        load(TrainConfig, None, ["rl.max_staleness=-1"])
    with pytest.raises(configlib.ConfigError, match="rl.dynamic_sampling"):
        load(TrainConfig, None, ["rl.mode=async", "rl.dynamic_sampling=true"])
    with pytest.raises(configlib.ConfigError, match="runtime=ray .* set rl.mode=async"):
        load(TrainConfig, None, ["runtime=ray"])
    with pytest.raises(configlib.ConfigError, match="rl.tis_level"):
        load(TrainConfig, None, ["rl.tis_level=word"])


def test_a_family_that_cannot_travel_keeps_its_worker_in_this_process(tiny_policy):
    from tracerl.envs.calc import CalcFamily
    from tracerl.guard.config import GuardConfig
    from tracerl.guard.pipeline import Guard
    from tracerl.runtime.local import LocalRollouts
    from tracerl.train.async_loop import WorkerRunner, make_pool

    cfg = configlib.load(TrainConfig, None, ["rl.mode=async"])
    family = CalcFamily(calls=1, guard=Guard(GuardConfig()))  # its guard holds locks
    pool = make_pool(cfg, WorkerRunner(cfg, tiny_policy, family), family)
    try:
        assert isinstance(pool, LocalRollouts) and pool.counters().workers == 1
    finally:
        pool.close()


def test_ctrl_c_in_the_update_hands_the_step_groups_back(fresh_tiny_policy, tmp_path):
    """Ctrl-C lands in the update (the longest part of an async step), after the step
    took its groups from the buffer: the checkpoint still accounts for every group, the
    interrupted step's as groups to sample again, and the version is not bumped."""
    from tracerl.envs.calc import CalcFamily
    from tracerl.runtime.local import LocalRollouts
    from tracerl.train.async_loop import WorkerRunner
    from tracerl.train.optim import adamw
    from tracerl.train.rl_step import RLStep
    from tracerl.train.runner import build_runner

    cfg = configlib.load(TrainConfig, None, [*TINY, "rl.buffer_groups=4"])
    family = CalcFamily(calls=1)
    learner = RLStep(fresh_tiny_policy, cfg, family, build_runner(cfg, fresh_tiny_policy,
                                                                   family))
    pool = LocalRollouts(WorkerRunner(cfg, fresh_tiny_policy, family), 4)
    loop = AsyncRL(learner, adamw(fresh_tiny_policy.model.parameters(), 1e-4), family, pool)
    try:
        loop.step(0)
        update = learner.update

        def interrupted(*args, **kwargs):  # SIGINT's KeyboardInterrupt, raised mid-update
            raise KeyboardInterrupt

        learner.update = interrupted
        with pytest.raises(KeyboardInterrupt):
            loop.step(1)
        learner.update = update
        loop.save(tmp_path)
    finally:
        loop.close()
    state, buffered = AsyncRL.load(tmp_path)
    assert state is not None and state.version == 1 and len(state.trained) == 2
    every = state.trained + state.stale + state.lost + state.requeue + \
        [f.index for f in buffered]
    assert sorted(every) == list(range(state.next_index))  # none lost, none twice
    assert len(state.requeue) >= 2  # the interrupted step's groups, to sample again
