"""Training: config, stages (SFT, DPO, RL), the Trainer, checkpoints and loggers.

Names are imported on first use, so reading the config never loads torch.
"""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "ConfigError": "tracerl.train.configlib",
    "TrainConfig": "tracerl.train.config",
    "Summary": "tracerl.train.trainer",
    "Trainer": "tracerl.train.trainer",
    "RLStep": "tracerl.train.rl_step",
    "build_runner": "tracerl.train.runner",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
