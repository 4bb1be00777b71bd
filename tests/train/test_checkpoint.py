import torch

from tracerl.policy.lora import has_adapter
from tracerl.train.checkpoint import TrainerState, load_checkpoint_policy, save_checkpoint


def test_a_lora_checkpoint_holds_the_adapter_only_and_loads_back_identically(
        tmp_path, lora_policy):
    run = tmp_path  # the base (tmp_path/tiny) lies inside the run directory
    path = save_checkpoint(run, lora_policy, TrainerState(rl_step=3), None, {})
    assert not (path / "model.safetensors").exists()
    adapter = (path / "adapter_model.safetensors").stat().st_size
    assert adapter < (run / "tiny" / "model.safetensors").stat().st_size / 10

    loaded = load_checkpoint_policy(path)
    assert has_adapter(loaded.model)
    want, got = lora_policy.model.state_dict(), loaded.model.state_dict()
    assert want.keys() == got.keys() and all(torch.equal(want[k], got[k]) for k in want)


def test_a_run_directory_with_a_lora_checkpoint_can_move(tmp_path, lora_policy):
    path = save_checkpoint(tmp_path, lora_policy, TrainerState(), None, {})
    moved = tmp_path.parent / f"{tmp_path.name}-moved"
    tmp_path.rename(moved)
    loaded = load_checkpoint_policy(moved / "checkpoints" / path.name)
    assert has_adapter(loaded.model)
