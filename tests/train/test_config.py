import pytest

from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError


def test_defaults_load():
    cfg = configlib.load(TrainConfig)
    assert cfg.model == "tiny" and cfg.stages == ["sft", "rl"]


def test_yaml_then_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("rl:\n  steps: 7\n  lr: 0.01\nseed: 3\n")
    cfg = configlib.load(TrainConfig, str(path), ["rl.steps=9", "stages=[rl]", "rl.clip_high=1"])
    assert (cfg.rl.steps, cfg.rl.lr, cfg.seed, cfg.stages) == (9, 0.01, 3, ["rl"])
    assert cfg.rl.clip_high == 1.0 and isinstance(cfg.rl.clip_high, float)


def test_exponent_floats_without_a_dot_are_floats():
    # YAML 1.1 parses 1e-4 as the string "1e-4"
    assert configlib.load(TrainConfig, None, ["rl.lr=1e-4"]).rl.lr == 1e-4


@pytest.mark.parametrize("override,message", [
    (["rl.stepz=3"], "unknown config key 'rl.stepz'"),
    (["rl.steps=many"], "rl.steps: expected int, got str 'many'"),
    (["rl.loss_agg=mean"], "rl.loss_agg: 'mean' is not one of"),
    (["stages=[sft,ppo]"], "stages[1]: 'ppo' is not one of"),
    (["rl.group_size=1"], "group_size must be >= 2"),
    (["log.progress=maybe"], "log.progress: expected true or false"),
    (["rl=3"], "rl: expected a mapping"),
    (["steps"], "not of the form key=value"),
    (["tiny.hidden_size=100", "tiny.heads=3"], "not divisible by heads"),
    (["sampler.max_rows=-1"], "sampler.max_rows must be >= 0"),
])
def test_bad_config_is_rejected_naming_the_field(override, message):
    with pytest.raises(ConfigError) as e:
        configlib.load(TrainConfig, None, override)
    assert message in str(e.value)


def test_every_field_is_documented():
    rows = configlib.describe(TrainConfig)
    undocumented = [key for key, _, _, doc in rows if not doc]
    assert not undocumented
    assert ("rl.steps", "int", "100", "RL steps (one rollout batch and one update each).") in rows


def test_the_config_imports_without_torch():
    import subprocess
    import sys

    code = ("import sys; from tracerl.train import configlib; "
            "from tracerl.train.config import TrainConfig; configlib.describe(TrainConfig); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'torch', 'transformers', 'opentelemetry', 'matplotlib'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_old_dr_grpo_switch_becomes_the_one_name():
    cfg = configlib.load(TrainConfig, None, ["rl.std_normalize=false"])
    assert cfg.rl.advantage == "dr_grpo"
    assert configlib.load(TrainConfig, None, ["rl.std_normalize=true"]).rl.advantage == "grpo"
    with pytest.raises(configlib.ConfigError, match="rl.advantage=dr_grpo"):
        configlib.load(TrainConfig, None, ["rl.std_normalize=false", "rl.advantage=rloo"])


def test_a_named_model_brings_its_preset_and_the_user_still_wins(tmp_path):
    """`model=smollm2-135m` alone gets the measured recipe; YAML and key=value override
    it key by key; the tiny defaults are untouched."""
    cfg = configlib.load(TrainConfig, None, ["model=smollm2-135m"])
    from tracerl.policy.precision import resolve_precision
    from tracerl.policy.zoo import SMOLLM2_PRESET as preset

    auto = resolve_precision("auto", "cpu")  # the preset's dtype=auto on this machine
    assert (cfg.dtype, cfg.lora.r, cfg.rl.max_turns) == (auto, 16, 4)
    assert (cfg.sft.demos, cfg.sft.epochs, cfg.rl.lr, cfg.sampler.max_rows) == (
        preset["sft.demos"], preset["sft.epochs"], preset["rl.lr"], preset["sampler.max_rows"])
    assert cfg.sft.epochs == 2  # two SFT epochs: RL ends higher (measured)
    gemma = configlib.load(TrainConfig, None, ["model=gemma3-270m"])
    assert (gemma.sft.demos, gemma.sft.epochs) == (320, 1)  # its own SFT, not SmolLM2's
    assert cfg.rl.tis_cap == 2.0  # truncated IS against the bfloat16 drift
    assert gemma.rl.tis_cap == 2.0
    path = tmp_path / "c.yaml"
    path.write_text("model: smollm2-135m\nrl:\n  max_turns: 2\n")
    cfg = configlib.load(TrainConfig, str(path), ["lora.r=4"])
    assert (cfg.rl.max_turns, cfg.lora.r, cfg.dtype) == (2, 4, auto)
    tiny = configlib.load(TrainConfig, None, [])
    assert (tiny.dtype, tiny.lora.r) == ("float32", 0)
