"""The rules of the goals met by swapping replicas (pure), shared by both planners.

TopicReplicaDistribution and DiskUsageDistribution come after the replica counts are even
(ReplicaDistribution's moves always come first: they drain and fill brokers). Both only swap
replicas between two brokers, one each way, so no broker's replica count ever changes: the count
balance reached first stays exactly as it was, as Cruise Control requires of a later goal. They
run in the order listed, and the later one never undoes the earlier: a swap is refused if it
takes a topic's count on a broker out of (or further from) the topic's band, or a broker's bytes
out of (or further from) the disk band. LeaderDistribution reorders replica lists, which changes
none of these figures, so it runs after them wherever it is listed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

TOPIC_REPLICA_DISTRIBUTION = "TopicReplicaDistribution"
DISK_USAGE_DISTRIBUTION = "DiskUsageDistribution"
SWAP_GOALS = (TOPIC_REPLICA_DISTRIBUTION, DISK_USAGE_DISTRIBUTION)

# Cruise Control's disk.balance.threshold (1.1) with its BALANCE_MARGIN (0.9): a broker whose
# bytes are within 9% of the mean is balanced.
DISK_TOLERANCE = 0.09


def topic_band(replicas: int, brokers: int) -> tuple[int, int]:
    """(floor, ceil) of a topic's replicas per broker: R_t // n and its ceiling."""
    low, extra = divmod(replicas, brokers)
    return low, low + (1 if extra else 0)


def topic_count_ok(count: int, change: int, band: tuple[int, int]) -> bool:
    """Whether a topic's count on a broker may change by `change` (+1 or -1): never out of its
    band, nor further out of it."""
    low, high = band
    after = count + change
    return low <= after <= high or abs(_outside(after, band)) < abs(_outside(count, band))


def _outside(count: int, band: tuple[int, int]) -> int:
    return count - band[1] if count > band[1] else count - band[0] if count < band[0] else 0


def disk_band(total: int, brokers: int, tolerance: float = DISK_TOLERANCE) -> tuple[float, float]:
    """The bytes a balanced broker holds: the mean, give or take `tolerance` of it."""
    mean = total / brokers
    return mean * (1 - tolerance), mean * (1 + tolerance)


def disk_load_ok(load: int, change: int, total: int, brokers: int) -> bool:
    """Whether a broker's bytes may change by `change`: they stay in the disk band, or come no
    further from the mean than they were."""
    low, high = disk_band(total, brokers)
    after = load + change
    mean = total / brokers
    return low <= after <= high or abs(after - mean) <= abs(load - mean)


def disk_amounts(
    loads: Mapping[int, int], brokers: Iterable[int], movers: Iterable[int]
) -> tuple[dict[int, int], dict[int, int]]:
    """(bytes to give, bytes to take) by broker, for brokers of `movers`: those outside the band
    to half the tolerance inside it (a margin, as Cruise Control's), and, as far as these
    cannot meet each other, those inside it on the far side of the mean, never past the mean.
    Moving no more keeps the bytes copied down."""
    eligible = list(brokers)
    total = sum(loads.get(b, 0) for b in eligible)
    mean = total / len(eligible)
    aim_low, aim_high = disk_band(total, len(eligible), DISK_TOLERANCE / 2)
    low, high = disk_band(total, len(eligible))
    give = {b: math.floor(loads[b] - aim_high) for b in sorted(movers) if loads[b] > high}
    take = {b: math.floor(aim_low - loads[b]) for b in sorted(movers) if loads[b] < low}
    short = sum(take.values()) - sum(give.values())
    # The rest from (or to) the brokers nearest the band's far edge first.
    if short > 0:
        spare = sorted((b for b in movers if mean < loads[b] <= high), key=lambda b: (-loads[b], b))
        short = _draw(give, spare, short, lambda b: math.floor(loads[b] - mean))
    elif short < 0:
        room = sorted((b for b in movers if low <= loads[b] < mean), key=lambda b: (loads[b], b))
        _draw(take, room, -short, lambda b: math.floor(mean - loads[b]))
    return {b: v for b, v in give.items() if v > 0}, {b: v for b, v in take.items() if v > 0}


def _draw(
    into: dict[int, int], brokers: Iterable[int], amount: int, most: Callable[[int], int]
) -> int:
    for b in brokers:
        if amount <= 0:
            break
        part = min(amount, most(b))
        into[b] = part
        amount -= part
    return amount


def disk_balanced(loads: Mapping[int, int], brokers: Iterable[int]) -> bool:
    eligible = list(brokers)
    total = sum(loads.get(b, 0) for b in eligible)
    low, high = disk_band(total, len(eligible))
    return all(low <= loads.get(b, 0) <= high for b in eligible)


def disk_spread(loads: Mapping[int, int], brokers: Iterable[int]) -> int:
    values = [loads.get(b, 0) for b in brokers]
    return max(values) - min(values) if values else 0


def disk_unbalanced(loads: Mapping[int, int], brokers: Iterable[int]) -> str:
    """Why DiskUsageDistribution is not met, with the figures."""
    eligible = list(brokers)
    values = [loads.get(b, 0) for b in eligible]
    mean = sum(values) / len(values)
    return (
        f"bytes per broker range {min(values):,} to {max(values):,}, beyond "
        f"{DISK_TOLERANCE:.0%} of the mean {mean:,.0f}: no legal swap narrows them"
    )
