"""Who is at fault decides the score: Unjudged becomes a None score with its reason."""

from __future__ import annotations

from tracerl.evals.fault import MissingReference, Unjudged, malformed_reference
from tracerl.evals.items import EvalItem, item_from_text
from tracerl.evals.metric import UNJUDGED, score


class NeedsGold:
    name = "needs_gold"

    def __call__(self, item: EvalItem) -> float:
        if item.reference.get("gold") == "broken":
            raise malformed_reference("gold", "is broken")
        return float(item.require("gold") == item.output_text())


def test_unjudged_becomes_none_with_the_reason():
    assert score(NeedsGold(), item_from_text("a", gold="a")).score == 1.0
    missing = score(NeedsGold(), item_from_text("a"))
    assert missing.score is None and missing.details[UNJUDGED] == "no reference field 'gold'"
    broken = score(NeedsGold(), item_from_text("a", gold="broken"))
    assert broken.details[UNJUDGED] == "reference field 'gold' is broken"


def test_missing_reference_is_both_unjudged_and_a_key_error():
    exc = MissingReference("no reference field 'x'")
    assert isinstance(exc, Unjudged) and isinstance(exc, KeyError)
    assert str(exc) == "no reference field 'x'"
