"""Adapters to the field's formats: TRL / verl prompt datasets, SkyRL-gym text envs
(both ways), and TRL SFT / DPO conversational JSONL (docs/adapters.md).

Names are imported on first use.
"""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "read_prompt_dataset": "tracerl.adapters.datasets",
    "prompt_family": "tracerl.adapters.datasets",
    "ComputeScoreReward": "tracerl.adapters.datasets",
    "FromSkyRL": "tracerl.adapters.skyrl",
    "ToSkyRL": "tracerl.adapters.skyrl",
    "skyrl_family": "tracerl.adapters.skyrl",
    "env_reward": "tracerl.adapters.skyrl",
    "sft_records": "tracerl.adapters.export",
    "dpo_records": "tracerl.adapters.export",
    "write_jsonl": "tracerl.adapters.export",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
