"""Bring your own agent: an OpenAI-compatible endpoint backed by the policy, which records
every call into episodes and trains on them (docs/serve.md).

Names are imported on first use.
"""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "Engine": "tracerl.serve.engine",
    "ServeConfig": "tracerl.serve.engine",
    "Recorder": "tracerl.serve.episodes",
    "group_by_task": "tracerl.serve.episodes",
    "ServedLearner": "tracerl.serve.learner",
    "Server": "tracerl.serve.server",
    "build_service": "tracerl.serve.server",
    "load_served": "tracerl.serve.server",
    "build_app": "tracerl.serve.app",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
