import random

import pytest
from guard_corpus import fakes

from tracerl.guard import scan

RNG = random.Random(0)


@pytest.mark.parametrize(
    "text, kind",
    [
        ("aws_access_key_id = AKIA2E0A8F3B244C9986", "aws_access_key"),
        ("export GITHUB_TOKEN=ghp_" + fakes.api_secret(RNG, 36), "github_token"),
        ("xoxb-123456789012-123456789012-" + fakes.api_secret(RNG, 24), "slack_token"),
        ("sk_live_" + fakes.api_secret(RNG, 24), "stripe_key"),
        ("AIza" + fakes.token(RNG, 35), "google_api_key"),
        ("OPENAI_API_KEY=sk-proj-" + fakes.api_secret(RNG, 48), "openai_key"),
        ("hf_" + fakes.api_secret(RNG, 34), "huggingface_token"),
        (fakes.private_key(RNG), "private_key"),
        ("Authorization: Bearer " + fakes.jwt(RNG), "jwt"),
        ("postgresql://app:Sunset2024!@db.internal:5432/app", "connection_string_password"),
        ("redis://:Xy7pQ2mN9s@cache:6379/0", "connection_string_password"),
        ("DB_PASSWORD='maple8812#'", "secret_assignment"),
        ('"client_secret": "' + fakes.api_secret(RNG, 32) + '"', "secret_assignment"),
    ],
)
def test_positive_is_found_with_its_kind(text, kind, kinds):
    assert kind in kinds(text, "secrets")


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f2a9b1c0d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a",
        "sha256: " + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "request_id: 550e8400-e29b-41d4-a716-446655440000",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "password = os.environ['DB_PASSWORD']",
        "password: ${DB_PASSWORD}",
        "password = user_input",
        "postgresql://user:password@localhost/db",
        "postgres://localhost:5432/mydb",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
        "max_tokens: 4096",
        "tokenizer: bert-base-uncased",
        "API_KEY=your_api_key_here",
        "task-8f3a9b2c7d1e4f5a6b7c8d9e0f1a",
    ],
)
def test_hard_negative_is_not_flagged(text, kinds):
    assert kinds(text, "secrets") == set()


def test_private_key_span_covers_the_whole_block():
    key = fakes.private_key(random.Random(1))
    text = f"config:\n{key}\nend"
    (f,) = scan(text, ["secrets"])
    assert text[f.start : f.end] == key


def test_finding_never_carries_the_secret_text():
    secret = "ghp_" + fakes.api_secret(random.Random(2), 36)
    (f,) = scan(f"token {secret}", ["secrets"])
    assert secret not in repr(f)


def test_every_key_name_holds_a_trigger_within_the_declared_lead() -> None:
    from tracerl.guard.secrets import _KEYS, _KEYS_LEAD, PATTERNS

    (assignment,) = [p for p in PATTERNS if p.kind == "secret_assignment"]
    assert assignment.lead == _KEYS_LEAD
    names = {alt.replace("[_-]?", sep).replace("s?", s)
             for alt in _KEYS.split("|") for sep in ("", "_", "-") for s in ("", "s")}
    assert len(names) > 30
    for name in names:
        assert min(name.find(t) for t in assignment.triggers if t in name) <= _KEYS_LEAD, name
