"""The optional sinks: a missing extra is named at Trainer start; W&B and MLflow runs are
continued on resume (ids in sinks.json) and new ones started otherwise; `log.*` keys."""

import json
import logging
import sys

import pytest

from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError
from tracerl.train.sinks import mlflow_tracking_uri, open_sinks
from tracerl.train.trainer import Trainer

TINY = ["tiny.hidden_size=32", "tiny.heads=2", "tiny.layers=1", "tiny.intermediate_size=64",
        "log.progress=false", "log.tensorboard=false", "trace.enabled=false", "eval.tasks=2",
        "rl.tasks_per_step=2", "rl.group_size=2", "rl.max_turn_tokens=12", "rl.max_turns=2"]


@pytest.mark.parametrize("module,key", [("wandb", "log.wandb=proj"),
                                        ("mlflow", "log.mlflow=mlruns")])
def test_a_missing_extra_is_named_when_the_trainer_starts(tmp_path, monkeypatch, module, key):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    cfg = configlib.load(TrainConfig, None, TINY + [key])
    with pytest.raises(ConfigError, match=rf"pip install 'tracerl\[{module}\]'"):
        Trainer(cfg, tmp_path / "run")
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


@pytest.mark.parametrize("override,message", [
    ("log.wandb=a/b/c", "ENTITY/PROJECT"),
    ("log.wandb_mode=shared", "log.wandb_mode"),
    ("log.mlflow_experiment=", "mlflow_experiment"),
])
def test_bad_log_keys_are_named(override, message):
    with pytest.raises(ConfigError, match=message):
        configlib.load(TrainConfig, None, ["log.mlflow=x", override])


def test_an_mlflow_directory_becomes_an_sqlite_store(tmp_path):
    uri = mlflow_tracking_uri(str(tmp_path / "mlruns"))
    assert uri == f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}"
    assert (tmp_path / "mlruns").is_dir()
    for given in ("http://127.0.0.1:5000", "sqlite:///x.db", f"file:{tmp_path}", "databricks"):
        assert mlflow_tracking_uri(given) == given


@pytest.mark.slow  # starts W&B twice and MLflow twice
def test_resume_continues_the_wandb_and_mlflow_runs(tmp_path, monkeypatch, caplog):
    pytest.importorskip("wandb")
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    for var in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR", "WANDB_DIR"):
        monkeypatch.setenv(var, str(tmp_path / "wandb-home"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    # The file store is MLflow's own opt-in and spares this test creating an SQLite
    # database (seconds); test_loggers.py trains against the SQLite store.
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = f"file:{tmp_path / 'mlruns'}"
    cfg = configlib.load(TrainConfig, None, [
        "log.tensorboard=false", "log.wandb=proj", f"log.mlflow={store}",
        "credit.judge_model=" + "m" * 7000])  # longer than an MLflow param may be
    run_dir = tmp_path / "run"
    run_dir.mkdir()

    def session(resume_step, steps):
        wandb_sink, mlflow_sink = open_sinks(cfg, run_dir, resume_step)
        for step in steps:
            for sink in (wandb_sink, mlflow_sink):
                sink.log("rl", step, {"loss": float(step)})
        for sink in (wandb_sink, mlflow_sink):
            sink.close()
        return wandb_sink.run.id, mlflow_sink.run_id

    first = session(None, [1, 2])
    assert session(1, [2, 3]) == first
    # both sessions wrote under the same run id (W&B names the folder by the second it
    # started, so two sessions within one second share a folder)
    assert list(run_dir.glob(f"wandb/offline-run-*-{first[0]}"))
    client = MlflowClient(tracking_uri=store)
    history = client.get_metric_history(first[1], "rl/loss")
    assert sorted(m.step for m in history) == [1, 2, 2, 3]
    params = client.get_run(first[1]).data.params
    assert len(params) > 100 and len(params["credit.judge_model"]) == 6000

    assert set(session(None, [1])).isdisjoint(first)  # a fresh start is a new run
    (run_dir / "sinks.json").unlink()
    with caplog.at_level(logging.WARNING, logger="tracerl.train.sinks"):
        assert set(session(4, [5])).isdisjoint(first)
    assert caplog.text.count("starting a new one") == 2
    assert set(json.loads((run_dir / "sinks.json").read_text())) == {"wandb", "mlflow"}
