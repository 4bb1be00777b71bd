"""Token ids back to per-token text with the run's tokenizer."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from tracerl.policy.tokenizer import build_char_tokenizer
from tracerl.view.tokens import TokenText, find_tokenizer


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "checkpoints" / "stage0-step000001"
    build_char_tokenizer().save_pretrained(str(path))
    return path / "tokenizer.json"


def test_pieces_join_to_the_decoded_text(tokenizer_file):
    tok = Tokenizer.from_file(str(tokenizer_file))
    ids = tok.encode('<tool_call>{"a": 1}</tool_call><|im_end|>\n x').ids
    pieces = TokenText(tokenizer_file).pieces(ids)
    assert len(pieces) == len(ids) and pieces[0] == "<tool_call>"
    assert "".join(pieces) == tok.decode(ids, skip_special_tokens=False)


@pytest.fixture(scope="module")
def byte_level_file(tmp_path_factory):
    """A byte-level BPE tokenizer (the GPT-2 / SmolLM2 kind), trained here on a few words."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["ok done", "the word is amber"] * 10, trainer)
    path = tmp_path_factory.mktemp("bpe") / "tokenizer.json"
    tok.save(str(path))
    return path


def test_a_character_split_over_byte_tokens_shows_once_complete(byte_level_file):
    tok = Tokenizer.from_file(str(byte_level_file))
    ids = tok.encode("ok 😀 done").ids
    pieces = TokenText(byte_level_file).pieces(ids)
    emoji = [p for p in pieces if "😀" in p]
    assert len(emoji) == 1 and pieces.count("") == 3  # 4 byte tokens, the last shows it
    assert "".join(pieces) == "ok 😀 done"


def test_the_runs_tokenizer_is_found_beside_its_weights(tokenizer_file):
    run_dir = tokenizer_file.parents[2]
    assert find_tokenizer(run_dir) == tokenizer_file
    assert find_tokenizer(run_dir / "checkpoints") is None


def test_without_a_tokenizer_tokens_show_as_ids():
    text = TokenText(None)
    assert not text.available and text.pieces([5, 17]) == ["[5]", "[17]"]
