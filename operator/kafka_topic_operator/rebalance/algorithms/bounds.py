"""Exact lower bounds on the moves that balance a cluster (pure).

Balanced means the counts per broker differ by at most one: with R items on n brokers, q = R // n
and r = R % n, exactly r brokers hold q + 1 and the others q. Every replica move takes one from a
donor and gives one to a receiver, so the fewest moves are the surplus above q, less the surplus
that may stay as one of the r "+1" slots:

    LB = sum over b of max(0, c_b - q), minus min(r, #{b : c_b > q})

(KIP-6's example 7, 6, 0, 0 gives 6.) Without rack constraints the bound is always reachable.
The same count bounds leader moves, though a leader can only move within its replica set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def balanced_counts(total: int, brokers: int) -> tuple[int, int]:
    """(q, r): r brokers hold q + 1 and the rest q."""
    if brokers <= 0:
        raise ValueError("no brokers to balance over")
    return divmod(total, brokers)


def move_lower_bound(counts: Mapping[int, int], brokers: Iterable[int]) -> int:
    """The fewest single-item moves that leave every broker of `brokers` within one of the others.

    `counts` may omit brokers (they hold none) and may hold brokers outside `brokers` (being
    drained: all of theirs must move)."""
    eligible = sorted(set(brokers))
    outside = sum(c for b, c in counts.items() if b not in set(eligible))
    inside = [counts.get(b, 0) for b in eligible]
    q, r = balanced_counts(sum(inside) + outside, len(eligible))
    above = [c for c in inside if c > q]
    return outside + sum(c - q for c in above) - min(r, len(above))


def spread(counts: Mapping[int, int], brokers: Iterable[int]) -> int:
    values = [counts.get(b, 0) for b in brokers]
    return max(values) - min(values) if values else 0


def targets(counts: Mapping[int, int], brokers: Iterable[int]) -> dict[int, int]:
    """Each broker's count once balanced: the r "+1" slots go to the brokers holding the most
    now, so that no move is spent on them; brokers outside `brokers` (drained) get 0."""
    eligible = sorted(set(brokers))
    q, r = balanced_counts(sum(counts.values()), len(eligible))
    fullest = set(sorted(eligible, key=lambda b: (-counts.get(b, 0), b))[:r])
    out = {b: q + (b in fullest) for b in eligible}
    out.update({b: 0 for b in counts if b not in out})
    return out


def off_targets(
    counts: Mapping[int, int], brokers: Iterable[int]
) -> tuple[dict[int, int], dict[int, int]]:
    """(surplus, deficit) by broker against `targets`: what each must give and take."""
    goal = targets(counts, brokers)
    surplus = {b: counts.get(b, 0) - t for b, t in goal.items() if counts.get(b, 0) > t}
    deficit = {b: t - counts.get(b, 0) for b, t in goal.items() if counts.get(b, 0) < t}
    return surplus, deficit
