"""Training: config, stages (SFT, GRPO), the Trainer, checkpoints and loggers."""

from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError
from tracerl.train.trainer import Summary, Trainer

__all__ = ["ConfigError", "Summary", "TrainConfig", "Trainer"]
