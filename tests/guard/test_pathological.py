"""Adversarial inputs must finish: no pattern may backtrack catastrophically.

The alarm is a hang guard, not a timing assertion (timings live in benchmarks/guard.py):
catastrophic backtracking on inputs this size takes hours, linear scanning well under a
second, so a 30 s alarm separates the two on any machine.
"""

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tracerl.guard import Guard, scan

UNITS = [
    "a", "1", "1 ", "ignore all previous ", "rm -r ", "a@", "x" * 60 + "@", "1.", "a:", "QUFB",
    "' or ", "../", ";&&|", "AB12", "deadbeef", "-----BEGIN PRIVATE KEY-----", "eyJabc.", "://a:b",
    "a\u200b", "\u0456gn\u043er\u0435 ", "1gn0r3 ", "+1 ", "key=", "<|", "curl ", "sleep(1 ",
    "DE89 ", "123-45-", "-", " ", "\n", "\\", "'", "password: x ", "%2e", "eval(", "`", "$(", "::",
    "\u202e", "aaaa@aaaa.", "sk-", "ghp_", "://",
]  # fmt: skip


class Hang(Exception):
    pass


@contextmanager
def hang_guard(seconds: int = 30) -> Iterator[None]:
    def on_alarm(signum: int, frame: object) -> None:
        raise Hang(f"scan did not finish within {seconds}s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("unit", UNITS)
def test_repeated_near_match_of_100kb_finishes(unit):
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    with hang_guard():
        scan(text)


def test_one_megabyte_of_a_finishes():
    with hang_guard():
        assert scan("a" * 1_000_000) == []


def test_one_megabyte_tool_call_through_the_guard_finishes():
    text = ("ls; echo 'hi' -- ../x " * 50_000)[:1_000_000]
    with hang_guard():
        Guard().check_tool_call("bash", {"command": text})


def test_attack_after_a_megabyte_of_padding_is_still_found():
    with hang_guard():
        found = scan("a " * 500_000 + "rm -rf /", ["code_injection"])
    assert [f.kind for f in found] == ["destructive_command"]
