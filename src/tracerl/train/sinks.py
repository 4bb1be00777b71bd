"""Metric sinks beside metrics.jsonl: TensorBoard, Weights & Biases, MLflow.

A sink gets each record's finite scalars as `stage/key` at the stage's step; the
MetricsLog (train/loggers.py) contains whatever a sink raises mid-run. W&B and MLflow
are optional extras: a package is imported only when its key (`log.wandb`, `log.mlflow`)
is set, when the Trainer starts, so a missing extra or an unreachable server is a clear
error before any training rather than a crash mid-run.

Their run ids are kept in RUN_DIR/sinks.json, so `--resume` continues the same W&B and
MLflow runs (offline W&B writes a second offline-run-* folder with the same id, which
`wandb sync` uploads into one run). Records past the checkpoint a run resumes from were
already sent: metrics.jsonl and TensorBoard drop them, W&B and MLflow keep them, so those
steps may show twice there.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tracerl.train.configlib import ConfigError, to_dict

if TYPE_CHECKING:
    from tracerl.train.config import TrainConfig

log = logging.getLogger(__name__)


class Sink(Protocol):
    """A mirror of metrics.jsonl: gets each record's finite scalars; may raise (contained)."""

    name: str

    def log(self, stage: str, step: int, scalars: dict[str, float]) -> None: ...

    def close(self) -> None: ...


class TensorBoardSink:
    name = "TensorBoard"

    def __init__(self, run_dir: Path, resume_step: int | None) -> None:
        from tensorboardX import SummaryWriter

        self.writer = SummaryWriter(str(run_dir / "tb"), purge_step=resume_step)

    def log(self, stage: str, step: int, scalars: dict[str, float]) -> None:
        for k, v in scalars.items():
            self.writer.add_scalar(f"{stage}/{k}", v, step)

    def close(self) -> None:
        self.writer.close()


def _require(module: str, key: str) -> Any:
    """Import an optional extra's package, or say which extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(f"{key} needs the {module} package: pip install "
                          f"'tracerl[{module}]' (or set {key}= to turn it off)") from e


class _RunIds:
    """RUN_DIR/sinks.json: each sink's run id and destination, so a resume continues it."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / "sinks.json"

    def _read(self) -> dict[str, Any]:
        return json.loads(self.path.read_text()) if self.path.is_file() else {}

    def previous(self, sink: str, destination: str, resumed: bool) -> str | None:
        if not resumed:
            return None
        saved = self._read().get(sink, {})
        if saved.get("destination") == destination:
            return saved["id"]
        log.warning("resumed run has no %s run recorded for %s in %s: starting a new one",
                    sink, destination, self.path)
        return None

    def save(self, sink: str, destination: str, run_id: str) -> None:
        data = self._read()
        data[sink] = {"destination": destination, "id": run_id}
        self.path.write_text(json.dumps(data, indent=2) + "\n")


class WandbSink:
    """A W&B run named after the run, with the config (sent again on resume: overrides may
    have changed it); `stage/key` against `stage/step`.

    Stages count steps separately (SFT, DPO, RL; eval at the RL step), and W&B wants its
    own step to only grow, so each stage gets its own x-axis (`define_metric`).
    """

    name = "W&B"

    def __init__(self, run: Any) -> None:
        self.run = run
        self.stages: set[str] = set()

    @classmethod
    def open(cls, config: TrainConfig, run_dir: Path, resumed: bool) -> WandbSink:
        wandb = _require("wandb", "log.wandb")
        entity, _, project = config.log.wandb.rpartition("/")
        ids = _RunIds(run_dir)
        run_id = ids.previous("wandb", config.log.wandb, resumed)
        try:
            # reinit=create_new: our run never finishes or replaces a user's own wandb.run.
            # console=off: the progress bar's redraws would flood the W&B log.
            run = wandb.init(
                project=project, entity=entity or None, name=config.name, id=run_id,
                resume="allow" if run_id else None, mode=config.log.wandb_mode,
                dir=str(run_dir), config=to_dict(config), allow_val_change=True,
                reinit="create_new", settings=wandb.Settings(console="off"))
        except Exception as e:
            raise ConfigError(f"log.wandb={config.log.wandb}: could not start the W&B run "
                              f"({type(e).__name__}: {e}); log.wandb_mode=offline needs no "
                              "account or network") from e
        ids.save("wandb", config.log.wandb, run.id)
        return cls(run)

    def log(self, stage: str, step: int, scalars: dict[str, float]) -> None:
        if stage not in self.stages:
            self.run.define_metric(f"{stage}/step")
            self.run.define_metric(f"{stage}/*", step_metric=f"{stage}/step")
            self.stages.add(stage)
        self.run.log({f"{stage}/step": step, **{f"{stage}/{k}": v for k, v in scalars.items()}})

    def close(self) -> None:
        self.run.finish()


# MLflow's limits (mlflow/utils/validation.py): 100 params per log_batch, 6000 characters
# per param value; metric and param names allow only these characters.
_PARAMS_PER_BATCH = 100
_PARAM_VALUE_MAX = 6000
_MLFLOW_NAME_BAD = re.compile(r"[^\w./\- :]")


def mlflow_tracking_uri(value: str) -> str:
    """`log.mlflow` as a tracking URI: a URI as given, a directory as DIR/mlflow.db.

    MLflow 3 refuses its old file store (./mlruns) unless MLFLOW_ALLOW_FILE_STORE=true;
    SQLite is the local store it supports, so a directory holds an SQLite database.
    """
    if "://" in value or value.startswith(("file:", "databricks")):
        return value
    path = Path(value).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path / 'mlflow.db'}"


def _flat_params(data: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """The config as MLflow params: dotted keys, JSON values (strings as they are)."""
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _flat_params(value, f"{prefix}{key}.")
        else:
            text = value if isinstance(value, str) else json.dumps(value)
            yield prefix + key, text[:_PARAM_VALUE_MAX]


class MLflowSink:
    """An MLflow run named after the run in `log.mlflow_experiment`; the flattened config
    as params (once, on a new run: MLflow refuses changed params); `stage/key` per step."""

    name = "MLflow"

    def __init__(self, client: Any, run_id: str, metric: type) -> None:
        self.client = client
        self.run_id = run_id
        self.metric = metric

    @classmethod
    def open(cls, config: TrainConfig, run_dir: Path, resumed: bool) -> MLflowSink:
        _require("mlflow", "log.mlflow")
        from mlflow.entities import Metric, Param
        from mlflow.tracking import MlflowClient

        uri = mlflow_tracking_uri(config.log.mlflow)
        ids = _RunIds(run_dir)
        run_id = ids.previous("mlflow", uri, resumed)
        try:
            client = MlflowClient(tracking_uri=uri)
            if run_id is not None and not _run_exists(client, run_id):
                log.warning("MLflow run %s is not in %s: starting a new one", run_id, uri)
                run_id = None
            if run_id is not None:
                client.update_run(run_id, status="RUNNING")
            else:
                name = config.log.mlflow_experiment
                experiment = client.get_experiment_by_name(name)
                experiment_id = (experiment.experiment_id if experiment is not None
                                 else client.create_experiment(name))
                run_id = client.create_run(experiment_id, run_name=config.name).info.run_id
                params = [Param(k, v) for k, v in _flat_params(to_dict(config))]
                for i in range(0, len(params), _PARAMS_PER_BATCH):
                    client.log_batch(run_id, params=params[i:i + _PARAMS_PER_BATCH])
        except Exception as e:
            raise ConfigError(f"log.mlflow={config.log.mlflow}: could not open an MLflow run "
                              f"at {uri} ({type(e).__name__}: {e})") from e
        ids.save("mlflow", uri, run_id)
        return cls(client, run_id, Metric)

    def log(self, stage: str, step: int, scalars: dict[str, float]) -> None:
        now = int(time.time() * 1000)
        metrics = [self.metric(_MLFLOW_NAME_BAD.sub("_", f"{stage}/{k}"), v, now, step)
                   for k, v in scalars.items()]
        self.client.log_batch(self.run_id, metrics=metrics)

    def close(self) -> None:
        self.client.set_terminated(self.run_id)


def _run_exists(client: Any, run_id: str) -> bool:
    try:
        client.get_run(run_id)
    except Exception:
        return False
    return True


def open_sinks(config: TrainConfig, run_dir: Path, resume_step: int | None) -> list[Sink]:
    """The sinks the `log` section turns on; resume_step is the checkpoint's RL step when
    the run resumes (W&B and MLflow then continue their runs), else None."""
    resumed = resume_step is not None
    sinks: list[Sink] = []
    try:
        if config.log.tensorboard:
            sinks.append(TensorBoardSink(run_dir, resume_step))
        if config.log.wandb:
            sinks.append(WandbSink.open(config, run_dir, resumed))
        if config.log.mlflow:
            sinks.append(MLflowSink.open(config, run_dir, resumed))
    except BaseException:
        for sink in sinks:
            sink.close()
        raise
    return sinks
