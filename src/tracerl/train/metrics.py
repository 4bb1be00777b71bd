"""Typed metrics of one RL step, and the flat record they become in metrics.jsonl."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from tracerl.rollout.runner import ENTROPY_SUM, RolloutStats
from tracerl.train.evaluate import summarize
from tracerl.train.rl_step import StepUpdate
from tracerl.types import Trajectory


@dataclass(frozen=True)
class RolloutSummary:
    """What the step's sampled trajectories did (every sample, dropped groups included)."""

    reward_mean: float
    """Mean outcome reward over judged samples."""
    success: float
    """Fraction of samples with full reward."""
    tool_use: float
    """Fraction of samples that made at least one tool call."""
    tool_errors: float
    """Tool errors per sample."""
    turns: float
    """Policy turns per sample."""
    counts: dict[str, float] = field(default_factory=dict)
    """Summed `guard/<action>` and `tool_error/<class>` counts."""
    entropy: float | None = None
    """Mean entropy (nats) of the sampling distribution per sampled token (None when the
    sampler does not report it)."""

    @classmethod
    def of(cls, trajectories: list[Trajectory]) -> RolloutSummary:
        """The held-out summary's figures (one definition of success, tool use, ...),
        plus turns and the guard / tool-error counts."""
        base = summarize(trajectories)
        counts: dict[str, float] = {}
        for t in trajectories:
            for k, v in t.metrics.items():
                if k.startswith(("guard/", "tool_error/")):
                    counts[k] = counts.get(k, 0.0) + v
        reported = [t for t in trajectories if ENTROPY_SUM in t.metrics]
        tokens = sum(len(turn.action_ids) for t in reported for turn in t.turns)
        entropy = (sum(t.metrics[ENTROPY_SUM] for t in reported) / tokens) if tokens else None
        return cls(reward_mean=base.mean_reward, success=base.success, tool_use=base.tool_use,
                   tool_errors=base.tool_errors,
                   turns=sum(len(t.turns) for t in trajectories) / max(1, len(trajectories)),
                   counts=counts, entropy=entropy)


@dataclass(frozen=True)
class StepTimes:
    rollout_s: float
    update_s: float
    sample_tok_s: float
    """Sampled tokens per second of sampler time."""
    update_tok_s: float
    """Trained tokens (prompt and response) per second of update time."""
    sync_s: float = 0.0
    """Seconds syncing the weights into a sampler holding its own copy (vLLM; 0 otherwise)."""
    sample_s: float = 0.0
    """Seconds the sampler ran for this step (async: the rollout workers', added up)."""


@dataclass(frozen=True)
class RLStepMetrics:
    """Everything one RL step reports."""

    rollout: RolloutSummary
    times: StepTimes
    update: StepUpdate
    unjudged: int
    env_errors: int
    sampling_rounds: int | None = None
    """Rollout rounds this step took (only with rl.dynamic_sampling)."""
    trace_failures: int | None = None
    """Trajectories the tracer could not record so far (None: tracing off)."""
    extra: dict[str, float] = field(default_factory=dict)
    """Figures of the run mode (async: policy version, staleness, buffer, lost groups)."""

    @classmethod
    def of(cls, trajectories: list[Trajectory], stats: RolloutStats, times: StepTimes,
           update: StepUpdate, sampling_rounds: int | None = None,
           trace_failures: int | None = None,
           extra: dict[str, float] | None = None) -> RLStepMetrics:
        return cls(RolloutSummary.of(trajectories), times, update, stats.unjudged,
                   stats.env_errors, sampling_rounds, trace_failures, extra or {})

    def record(self) -> dict[str, float]:
        """The flat scalars of metrics.jsonl and TensorBoard (names are stable)."""
        r = self.rollout
        out: dict[str, float] = {
            "reward_mean": r.reward_mean, "success": r.success, "tool_use": r.tool_use,
            "tool_errors": r.tool_errors, "turns": r.turns,
            "unjudged": float(self.unjudged), "env_errors": float(self.env_errors),
            **asdict(self.times)}
        if self.update.update is not None:
            out.update({k: float(v) for k, v in asdict(self.update.update).items()})
        out["update_skipped"] = float(self.update.skipped is not None)
        calib = self.update.calibration
        if calib is not None:
            out.update({"calib_spearman": calib.spearman, "calib_accuracy": calib.accuracy,
                        "calib_trusted": float(calib.trusted)})
        if self.sampling_rounds is not None:
            out["sampling_rounds"] = float(self.sampling_rounds)
        out.update(r.counts)
        if r.entropy is not None:
            out["entropy"] = r.entropy
        if self.trace_failures is not None:
            out["trace_failures"] = float(self.trace_failures)
        out.update(self.extra)
        return out
