"""MetricsLog: metrics.jsonl mirrored to every sink; a failing sink is contained; a short
training run with the real W&B (offline) and MLflow (SQLite) sinks, read back from their
own stores, matches metrics.jsonl."""

import json
import logging
import math
import struct
from pathlib import Path

import pytest

from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.loggers import MetricsLog, read_metrics
from tracerl.train.trainer import Trainer

TINY = ["tiny.hidden_size=32", "tiny.heads=2", "tiny.layers=1", "tiny.intermediate_size=64",
        "log.progress=false", "log.tensorboard=false", "trace.enabled=false", "eval.tasks=2",
        "rl.tasks_per_step=2", "rl.group_size=2", "rl.max_turn_tokens=12", "rl.max_turns=2"]


class FailingSink:
    name = "flaky"

    def __init__(self) -> None:
        self.calls = 0

    def log(self, stage: str, step: int, scalars: dict[str, float]) -> None:
        self.calls += 1
        raise ConnectionError("dashboard unreachable")

    def close(self) -> None:
        raise ConnectionError("dashboard unreachable")


def test_a_failing_sink_is_contained_warned_about_once_and_counted(tmp_path, caplog):
    sink = FailingSink()
    metrics = MetricsLog(tmp_path, [sink])
    with caplog.at_level(logging.WARNING, logger="tracerl.train.loggers"):
        for step in (1, 2, 3):
            metrics.log("rl", step, {"loss": 0.5})
        metrics.close()
    assert [r["step"] for r in read_metrics(tmp_path)] == [1, 2, 3]
    assert sink.calls == 3 and metrics.failures == {"flaky": 4}
    assert caplog.text.count("flaky sink failed at rl step 1") == 1
    assert "dashboard unreachable" in caplog.text and "4 failed calls" in caplog.text


def test_sinks_get_only_finite_numbers(tmp_path):
    class Keep:
        name = "keep"

        def __init__(self):
            self.got = []

        def log(self, stage, step, scalars):
            self.got.append(scalars)

        def close(self):
            pass

    sink = Keep()
    MetricsLog(tmp_path, [sink]).log("eval", 0, {"success": 0.5, "samples": 4, "final": True,
                                                  "loss": float("nan"), "note": "x"})
    assert sink.got == [{"success": 0.5, "samples": 4.0}]


def wandb_history(run_dir: Path) -> list[dict]:
    """The history rows in a run directory's offline W&B files. A .wandb file is a
    LevelDB-style log (a 7-byte header, then 32 KiB blocks of chunks, each with a 7-byte
    header: checksum, length, type) of protobuf Records; W&B has no offline reader."""
    from wandb.proto import wandb_internal_pb2

    block, rows = 32768, []
    for path in sorted(run_dir.glob("wandb/offline-run-*/run-*.wandb")):
        data, pos, payload = path.read_bytes(), 7, b""
        while pos + 7 <= len(data):
            if block - pos % block < 7:  # too short for a chunk header: padding
                pos += block - pos % block
                continue
            length, kind = struct.unpack("<HB", data[pos + 4:pos + 7])
            payload += data[pos + 7:pos + 7 + length]
            pos += 7 + length
            if kind in (1, 4):  # a FULL or LAST chunk ends a record
                record = wandb_internal_pb2.Record.FromString(payload)
                payload = b""
                if record.WhichOneof("record_type") == "history":
                    rows.append({i.key or "/".join(i.nested_key): json.loads(i.value_json)
                                 for i in record.history.item})
    return rows


@pytest.mark.slow  # trains a tiny model for 3 RL steps and creates an MLflow database
def test_training_mirrors_metrics_jsonl_to_wandb_and_mlflow(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    for var in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR", "WANDB_DIR"):
        monkeypatch.setenv(var, str(tmp_path / "wandb-home"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    cfg = configlib.load(TrainConfig, None, TINY + [
        "name=mirror", "stages=[rl]", "rl.steps=3", "log.wandb=tracerl-test",
        f"log.mlflow={tmp_path / 'mlruns'}", "log.mlflow_experiment=tests"])
    run_dir = tmp_path / "run"
    Trainer(cfg, run_dir).run()

    expected = {(r["stage"], k, r["step"]): v for r in read_metrics(run_dir)
                for k, v in r.items() if k not in ("stage", "step")
                and isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}
    assert {s for s, _, _ in expected} == {"rl", "eval"} and len(expected) > 40

    wandb_points = {}
    for row in wandb_history(run_dir):
        for key, value in row.items():
            stage, _, name = key.partition("/")
            if name and name != "step":
                wandb_points[stage, name, row[f"{stage}/step"]] = value
    assert wandb_points == pytest.approx(expected)

    ids = json.loads((run_dir / "sinks.json").read_text())
    client = MlflowClient(tracking_uri=ids["mlflow"]["destination"])
    run = client.get_run(ids["mlflow"]["id"])
    assert run.info.run_name == "mirror" and run.info.status == "FINISHED"
    assert run.data.params["rl.steps"] == "3" and run.data.params["log.wandb"] == "tracerl-test"
    mlflow_points = {}
    for key in run.data.metrics:
        stage, _, name = key.partition("/")
        for m in client.get_metric_history(run.info.run_id, key):
            mlflow_points[stage, name, m.step] = m.value
    assert mlflow_points == pytest.approx(expected)
