"""Environments: the Env protocol, check_env, ToolEnv and built-in task families.

Names are imported on first use (a module's own imports stay its own)."""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "CalcFamily": "tracerl.envs.calc",
    "Env": "tracerl.envs.base",
    "EnvCheckError": "tracerl.envs.base",
    "FamilyContext": "tracerl.envs.registry",
    "FamilyWithReward": "tracerl.envs.family",
    "TaskListFamily": "tracerl.envs.family",
    "FamilySpec": "tracerl.envs.registry",
    "build_family": "tracerl.envs.registry",
    "families": "tracerl.envs.registry",
    "register_family": "tracerl.envs.registry",
    "EnvFactory": "tracerl.envs.base",
    "StepResult": "tracerl.envs.base",
    "TaskFamily": "tracerl.envs.family",
    "ToolEnv": "tracerl.envs.tool_env",
    "ToolEnvConfig": "tracerl.envs.tool_env",
    "check_env": "tracerl.envs.base",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
