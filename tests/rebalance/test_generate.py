"""`kafka-reassign-partitions --generate` emulated: what it proposes, and how much more it moves
than the fewest moves."""

from __future__ import annotations

from collections import Counter

from kafka_topic_operator.kafka.assignment import default_random as seeded
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.generate import generate
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel, moves
from kto_dev.yardsticks.reference_planner import PlanRequest, plan
from kto_dev.yardsticks.samples import grown_cluster


def grown(seed: int, old: int, new: int) -> ClusterModel:
    return grown_cluster(seed, old, new, topics=(5, 14), partitions=(1, 20), racks=3)[0]


def test_the_proposal_keeps_every_partitions_replication_factor_on_the_given_brokers() -> None:
    model = grown(3, 6, 2)
    proposal = generate(model, tuple(range(8)), rng=seeded(1))
    assert proposal.keys() == model.assignment.keys()
    for tp, replicas in proposal.items():
        assert len(replicas) == len(model.assignment[tp]) == len(set(replicas))
        assert set(replicas) <= set(range(8))
        assert len({b % 3 for b in replicas}) == 3  # rack-aware: one replica per rack
    assert generate(model, tuple(range(8)), rng=seeded(1)) == proposal  # seeded: reproducible


def test_generate_moves_far_more_than_the_fewest_moves() -> None:
    ratios = []
    for seed in range(12):
        model = grown(seed, 5 + seed % 4, 1 + seed % 3)
        brokers = tuple(sorted({b for r in model.assignment.values() for b in r} |
                               set(model.racks)))  # fmt: skip
        ours = plan(PlanRequest(ClusterModel(model.assignment), brokers))
        proposal = generate(model, brokers, rack_aware=False, rng=seeded(seed))
        assert ours.replica_moves == ours.replica_lower_bound > 0
        ratios.append(moves(model.assignment, proposal) / ours.replica_moves)
    # Recomputing every topic from scratch moves most replicas: about three times the bound.
    assert sum(ratios) / len(ratios) > 2
    assert Counter(r > 1 for r in ratios)[True] == len(ratios)


def test_a_topic_missing_a_partition_is_still_proposed_for() -> None:
    # Partition 1's znode was unreadable: partitions 0 and 2 get the proposal's first two lists.
    tp = TopicPartition
    model = ClusterModel({tp("t", 0): (0, 1), tp("t", 2): (1, 2)})
    proposal = generate(model, (0, 1, 2), rng=seeded(1))
    assert sorted(proposal) == [tp("t", 0), tp("t", 2)]
    assert all(len(set(r)) == 2 for r in proposal.values())
