"""Environments: the Env protocol, check_env, ToolEnv and built-in task families."""

from tracerl.envs.base import Env, EnvCheckError, EnvFactory, StepResult, check_env
from tracerl.envs.calc import CalcFamily
from tracerl.envs.family import TaskFamily
from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig

__all__ = ["CalcFamily", "Env", "EnvCheckError", "EnvFactory", "StepResult", "TaskFamily",
           "ToolEnv", "ToolEnvConfig", "check_env"]
