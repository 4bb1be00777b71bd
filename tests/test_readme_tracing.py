"""The README's OpenAI-client tracing recipe works as written: its block runs (with a
look-alike client, `openai` not being a dependency), the trace shows in `tracerl traces
show` and `tracerl eval --metric exact_match` scores it (issue 33)."""

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"

CLIENT = '''
class _Completions:
    def create(self, **kwargs):
        return {"model": kwargs["model"], "usage": {"prompt_tokens": 9, "completion_tokens": 1,
                "total_tokens": 10},
                "choices": [{"message": {"role": "assistant", "content": "42"}}]}


class _Chat:
    completions = _Completions()


class LookAlike:
    chat = _Chat()


client = LookAlike()
'''


def recipe() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    (block,) = [b for b in blocks if "instrument_openai" in b]
    return textwrap.dedent(block)


def tracerl(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracerl.cli", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_the_readme_tracing_recipe_shows_and_scores_its_trajectory(tmp_path):
    done = subprocess.run([sys.executable, "-c", CLIENT + recipe()], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = tracerl("traces", "show", "runs/agent", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "What is 6*7?" in shown.stdout and "42" in shown.stdout
    scored = tracerl("eval", "runs/agent", "--metric", "exact_match", "--json", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    summary = json.loads(scored.stdout)["aggregates"]["exact_match"]
    assert summary["scored"] == 1 and summary["mean"] == 1.0
