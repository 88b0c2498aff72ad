"""A plain-loop, line-by-line port of AdminUtils.assignReplicasToBrokers.

It is the benchmark's anchor (what a straightforward Python port costs) and the tests' oracle for
the vectorised version; it takes the start index and shift already drawn.
"""

from __future__ import annotations


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def assign_rack_unaware(
    broker_ids: list[int], n_partitions: int, rf: int, start_index: int, shift: int,
    start_partition_id: int = -1,
) -> dict[int, list[int]]:  # fmt: skip
    n = len(broker_ids)
    result: dict[int, list[int]] = {}
    current = max(0, start_partition_id)
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            shift += 1
        first = (current + start_index) % n
        replicas = [broker_ids[first]]
        for j in range(rf - 1):
            replicas.append(broker_ids[_replica_index(first, shift, j, n)])
        result[current] = replicas
        current += 1
    return result


def rack_alternated(broker_racks: dict[int, str]) -> list[int]:
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker)
    iterators = {rack: iter(sorted(by_rack[rack])) for rack in sorted(by_rack)}
    result: list[int] = []
    while len(result) < len(broker_racks):
        for rack in sorted(by_rack):
            picked = next(iterators[rack], None)
            if picked is not None:
                result.append(picked)
    return result


def assign_rack_aware(
    broker_racks: dict[int, str], n_partitions: int, rf: int, start_index: int, shift: int,
    start_partition_id: int = -1,
) -> dict[int, list[int]]:  # fmt: skip
    arranged = rack_alternated(broker_racks)
    n = len(arranged)
    num_racks = len(set(broker_racks.values()))
    result: dict[int, list[int]] = {}
    current = max(0, start_partition_id)
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            shift += 1
        first = (current + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks = {broker_racks[leader]}
        brokers = {leader}
        k = 0
        for _ in range(rf - 1):
            done = False
            while not done:
                broker = arranged[_replica_index(first, shift * num_racks, k, n)]
                rack = broker_racks[broker]
                if (rack not in racks or len(racks) == num_racks) and (
                    broker not in brokers or len(brokers) == n
                ):
                    replicas.append(broker)
                    racks.add(rack)
                    brokers.add(broker)
                    done = True
                k += 1
        result[current] = replicas
        current += 1
    return result
