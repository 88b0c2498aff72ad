"""How creations are cut into requests a KRaft controller takes (its record limit)."""

from __future__ import annotations

from kafka_topic_operator.kafka.new_topic import NewTopic, creation_records, within_record_limit


def topic(name: str, partitions: int, configs: int = 0) -> NewTopic:
    return NewTopic(name, {p: [0] for p in range(partitions)},
                    {f"k{i}": "v" for i in range(configs)})  # fmt: skip


def test_a_topic_takes_a_record_for_itself_each_partition_and_each_config() -> None:
    assert creation_records(topic("t", 12, configs=2)) == 15
    mirs = NewTopic("m", {0: [0]}, {"min.insync.replicas": "2", "retention.ms": "1"})
    assert creation_records(mirs) == 5  # its ConfigRecord and a ClearElrRecord


def test_requests_keep_the_order_and_stay_under_the_limit() -> None:
    topics = [topic(f"t{i}", 3) for i in range(10)]  # 4 records each
    batches = within_record_limit(topics, limit=10)
    assert [[t.name for t in b] for b in batches] == [
        ["t0", "t1"], ["t2", "t3"], ["t4", "t5"], ["t6", "t7"], ["t8", "t9"],
    ]  # fmt: skip
    assert within_record_limit(topics) == [topics]  # 40 records: one request


def test_a_topic_over_the_limit_goes_alone() -> None:
    small, huge = topic("small", 1), topic("huge", 20)
    assert within_record_limit([small, huge, small], limit=10) == [[small], [huge], [small]]
    assert within_record_limit([]) == []
