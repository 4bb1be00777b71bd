"""What goes into a vLLM engine and what comes out of it, as plain data (no vllm import).

`engine_params` turns tracerl's SamplingParams and one row's token budget into the
keyword arguments of `vllm.SamplingParams`; `to_sample` turns one finished request
(its token ids, per-position log-probabilities and finish reason) into a Sample. Both
are pure, so they are tested here without vLLM or a GPU (tests/policy/test_vllm_io.py).

The Sample must mean what the transformers sampler's means (tracerl.policy.sampler):

- Stops. The engine gets the same stop ids and stop strings, `ignore_eos=True` (the
  model's eos ends a turn only when it is one of the stop ids, as in tracerl) and
  `skip_special_tokens=False` (stop strings are matched on the raw text, special tokens
  included). `to_sample` then cuts the ids at the first stop by tracerl's own rule (a
  stop id, or the token whose decoded tail completes a stop string: `StopText`), so a
  difference in how an engine detokenises or batches its stop checks cannot leak extra
  tokens into a Trajectory.
- Log-probabilities. tracerl records log p of each sampled id under logits / temperature,
  before top-p truncation; that is what the learner recomputes. vLLM's V1 engine reports
  raw logits' log-probabilities by default (no temperature) and, with
  `logprobs_mode="processed_logprobs"`, after temperature *and* top-k/top-p (vLLM 0.24,
  vllm/config/model.py). So the engine runs with processed log-probabilities and top-p
  must be 1, where both definitions agree; `engine_params` refuses top_p < 1 rather than
  record log-probabilities the learner would misread as an off-policy gap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracerl.policy.sampler import StopText
from tracerl.policy.sampling import Sample, SamplingParams

FINISH = {"stop": "stop", "length": "length"}
"""vLLM finish reasons a Sample can carry; anything else (abort, error) is a failure."""


def engine_params(params: SamplingParams, budget: int) -> dict[str, Any]:
    """Keyword arguments of `vllm.SamplingParams` for one row with `budget` new tokens."""
    if budget < 1:
        raise ValueError(f"every row needs a token budget >= 1, got {budget}")
    if params.top_p < 1.0:
        raise ValueError(
            f"top_p={params.top_p}: vLLM reports log-probabilities after top-p truncation, "
            "tracerl's learner recomputes them before it; use top_p=1 (rl.top_p) with "
            "sampler.backend=vllm")
    return {
        "n": 1,
        "temperature": params.temperature,
        "top_p": 1.0,
        "max_tokens": budget,
        "stop_token_ids": list(params.stop_ids),
        "stop": list(params.stop_strings),
        "ignore_eos": True,
        "logprobs": 0,  # the sampled token's own log-probability only
        "detokenize": bool(params.stop_strings),  # stop strings are matched on text
        "skip_special_tokens": False,
        "spaces_between_special_tokens": False,
        "include_stop_str_in_output": True,
    }


def _logprob(position: Mapping[int, Any], token: int) -> float:
    """The sampled token's entry of one position (a vLLM `Logprob`, or a float)."""
    if token not in position:
        raise ValueError(f"the engine returned no log-probability for sampled token {token}")
    value = position[token]
    return float(getattr(value, "logprob", value))


def stop_at(ids: Sequence[int], params: SamplingParams, stop_text: StopText | None) -> int:
    """The length of `ids` up to and including the first token that ends the turn by
    tracerl's rule (0 when none does)."""
    stop_ids = set(params.stop_ids)
    for i, tok in enumerate(ids):
        if tok in stop_ids:
            return i + 1
        if (stop_text is not None and tok < len(stop_text.may_end)
                and stop_text.may_end[tok] and stop_text.completed([ids[: i + 1]])[0]):
            return i + 1
    return 0


def to_sample(token_ids: Sequence[int], logprobs: Sequence[Mapping[int, Any]] | None,
              finish_reason: str | None, params: SamplingParams, budget: int,
              stop_text: StopText | None = None) -> Sample:
    """One finished engine request as a Sample (ids cut at tracerl's first stop).

    `logprobs[i]` maps token ids to their log-probability at position i (vLLM's
    `CompletionOutput.logprobs`, list or FlatLogprobs); the sampled id must be there.
    An engine that reports `stop` where tracerl's rule finds none (it matched a stop
    string in text tracerl decodes differently) still ended the turn: the Sample keeps
    every id and says `stop`.
    """
    if finish_reason not in FINISH:
        raise RuntimeError(f"the vLLM request ended with {finish_reason!r}, not stop or length")
    ids = list(token_ids)
    if not ids:
        raise RuntimeError("the vLLM request returned no tokens")
    if len(ids) > budget:
        raise RuntimeError(f"the vLLM request returned {len(ids)} tokens for a budget of "
                           f"{budget}")
    if logprobs is None or len(logprobs) < len(ids):
        raise RuntimeError("the vLLM request returned no log-probability for some tokens "
                           "(SamplingParams.logprobs must be 0)")
    end = stop_at(ids, params, stop_text)
    if end:
        ids = ids[:end]
    finish = "stop" if end else FINISH[finish_reason]
    lps = [_logprob(logprobs[i], tok) for i, tok in enumerate(ids)]
    return Sample(ids, lps, finish)  # type: ignore[arg-type]
