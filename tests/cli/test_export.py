import torch

from tracerl.cli import main
from tracerl.policy.model import load_policy
from tracerl.train.checkpoint import TrainerState, save_checkpoint

IDS = torch.tensor([[5, 17, 33, 8, 61, 12, 40]])


def logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=IDS).logits


def test_export_merges_a_checkpointed_adapter_into_a_plain_model(tmp_path, lora_policy):
    run = tmp_path / "run"
    (run).mkdir()
    (run / "config.yaml").write_text("{}\n")
    save_checkpoint(run, lora_policy, TrainerState(), None, {})
    assert main(["export", str(run)]) == 0
    merged = load_policy(run / "export")
    torch.testing.assert_close(logits(merged.model), logits(lora_policy.model), atol=1e-5,
                               rtol=0)


def test_export_of_a_full_checkpoint_writes_it_as_it_is(tmp_path, tiny_policy):
    checkpoint = save_checkpoint(tmp_path, tiny_policy, TrainerState(), None, {})
    assert main(["export", str(checkpoint), "--out", str(tmp_path / "out")]) == 0
    assert torch.equal(logits(load_policy(tmp_path / "out").model), logits(tiny_policy.model))


def test_export_without_a_checkpoint_exits_2(tmp_path, capsys):
    assert main(["export", str(tmp_path)]) == 2
    assert "config.json" in capsys.readouterr().err
