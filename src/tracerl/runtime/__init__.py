"""Where the parts of an async run go: threads of this process, or Ray actors.

A RolloutPool (runtime/base.py) is what the learner's loop (tracerl.train.async_loop)
talks to: submit jobs, sync weights, drain finished groups, learn which jobs were lost.
`ProcessRollouts` runs one StreamingRollout in a child process (`LocalRollouts` on a
thread); `tracerl.runtime.ray` runs rollout and reward workers as Ray actors (the
optional `tracerl[ray]` extra), placed beside the learner actor of
tracerl.train.ray_learner.
"""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "RayConfig": "tracerl.runtime.config",
    "RolloutPool": "tracerl.runtime.base",
    "LocalRollouts": "tracerl.runtime.local",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
