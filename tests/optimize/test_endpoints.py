"""The task model and the teacher behind an OpenAI-compatible endpoint: a real HTTP
server on 127.0.0.1 generating with the tiny policy (transformers `generate`), driven
through `/completions` (task model) and `/chat/completions` (teacher)."""

import json
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import torch

from tracerl.optimize import Budget, optimize
from tracerl.optimize.config import ModelConfig, TeacherConfig
from tracerl.policy.model import write_tiny
from tracerl.policy.tiny import TinySpec

SPEC = TinySpec(hidden_size=64, layers=2, heads=2, intermediate_size=128)


def _server(policy):
    lock = threading.Lock()

    def generate(prompt: str, max_tokens: int, stops: list[str]) -> tuple[str, str, int, int]:
        ids = policy.tokenizer(prompt, return_tensors="pt", add_special_tokens=False).input_ids
        with lock, torch.no_grad():
            out = policy.model.generate(ids, max_new_tokens=max_tokens, do_sample=False,
                                        pad_token_id=policy.pad_id)
        text = policy.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=False)
        cut = min((text.find(s) for s in stops if s in text), default=-1)
        return (text[:cut], "stop", ids.shape[1], out.shape[1] - ids.shape[1]) if cut >= 0 \
            else (text, "length", ids.shape[1], out.shape[1] - ids.shape[1])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server hook name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert self.headers["Authorization"] == "Bearer sk-test"
            if self.path.endswith("/completions") and "prompt" in body:
                text, reason, p, c = generate(body["prompt"], body["max_tokens"], body["stop"])
                choice = {"text": text, "finish_reason": reason}
            else:
                prompt = policy.tokenizer.apply_chat_template(
                    body["messages"], tokenize=False, add_generation_prompt=True)
                text, reason, p, c = generate(prompt, body["max_tokens"], ["<|im_end|>"])
                choice = {"message": {"role": "assistant", "content": text},
                          "finish_reason": reason}
            data = json.dumps({"choices": [choice], "usage": {
                "prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def _config(tmp_path, url):
    from tracerl.optimize import OptimizeConfig
    from tracerl.optimize.config import DataConfig
    from tracerl.optimize.settings import SearchSettings
    from tracerl.rollout.config import RolloutConfig
    from tracerl.train.config import TaskConfig

    return OptimizeConfig(
        model=ModelConfig(name="served-tiny", url=url, key_env="TEST_KEY",
                          tokenizer=str(tmp_path / "tiny")),
        teacher=TeacherConfig(name="served-tiny", url=url, key_env="TEST_KEY", max_tokens=12),
        data=DataConfig(train_tasks=2, heldout_tasks=2, example_pool=2),
        rollout=RolloutConfig(group_size=1, max_turns=2, max_turn_tokens=8,
                              max_response_tokens=32, temperature=0.0),
        search=SearchSettings(minibatch=2, max_examples=1),
        task=replace(TaskConfig(), calc=replace(TaskConfig().calc, calls=1)),
        budget=Budget(calls=12, tokens=4000), progress=False, threads=1)


@pytest.mark.slow
def test_task_model_and_teacher_served_over_http(tmp_path, monkeypatch):
    from tracerl.policy.model import load_policy

    policy = load_policy(write_tiny(tmp_path / "tiny", SPEC, 0))
    server = _server(policy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        monkeypatch.setenv("TEST_KEY", "sk-test")
        config = _config(tmp_path, url)
        result = optimize(config=config, optimizer="metaprompt", run_dir=tmp_path / "run")
        assert result.spent.calls <= 12 and result.spent.tokens <= 4000
        assert result.history[0].status == "scored" and result.history[0].calls == 2
        assert any(e.operation == "rewrite" for e in result.history)  # the teacher answered
        again = optimize(config=replace(config, heldout=False), optimizer="metaprompt",
                         run_dir=tmp_path / "run", resume=True)
        assert (again.spent.calls, again.spent.tokens) == (result.spent.calls, result.spent.tokens)
        monkeypatch.delenv("TEST_KEY")
        with pytest.raises(ValueError, match="'TEST_KEY' is not set"):
            optimize(config=config, optimizer="metaprompt")
    finally:
        server.shutdown()
