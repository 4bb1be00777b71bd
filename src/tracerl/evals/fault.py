"""Who is at fault decides the score.

What the policy controls is judged: an output that is malformed (a tool call whose
arguments are not JSON, a missing answer, broken JSON where JSON was asked) scores as
wrong, never None; otherwise a policy trained on the metric learns that breaking its
output escapes the penalty. What the data controls (a missing or malformed reference,
schema or gold answer) cannot judge the item: the metric raises `Unjudged` with the
reason, `score()` turns it into a None score carrying the reason, and `evaluate()`
counts the reasons per metric. A None is never a silent 0, and a 0 is never a data bug.
"""

from __future__ import annotations


class Unjudged(Exception):  # noqa: N818 - a verdict, not an error of the metric
    """The item's data cannot judge it (missing or malformed reference, schema, gold).

    `reason` is short and stable ("no reference field 'answer'") so reports can count
    items by reason.
    """

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class MissingReference(Unjudged, KeyError):
    """A reference field the metric reads is absent from the item."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self.reason


def malformed_reference(key: str, why: str) -> Unjudged:
    """The Unjudged for a reference field that is present but unusable."""
    return Unjudged(f"reference field {key!r} {why}")
