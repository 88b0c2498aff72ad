from __future__ import annotations

import threading

from kafka_topic_operator.topics.ownership import Claim, TopicClaims, claim_of


def test_the_oldest_claim_owns_a_topic() -> None:
    claims = TopicClaims()
    claims.claim(Claim("2026-01-02T00:00:00Z", "team-a", "younger", "orders"))
    claims.claim(Claim("2026-01-01T00:00:00Z", "team-b", "older", "orders"))
    claims.claim(Claim("2025-01-01T00:00:00Z", "team-c", "other", "payments"))
    assert claims.owner("orders") == ("team-b", "older")
    assert claims.owner("payments") == ("team-c", "other")
    assert claims.owner("nobody") is None


def test_ties_go_to_the_namespace_then_the_name() -> None:
    same = "2026-01-01T00:00:00Z"
    claims = TopicClaims([Claim(same, "b", "a", "t"), Claim(same, "a", "z", "t"),
                          Claim(same, "a", "y", "t")])  # fmt: skip
    assert claims.owner("t") == ("a", "y")


def test_a_released_owner_hands_the_topic_to_the_next_oldest() -> None:
    claims = TopicClaims([Claim("1", "ns", "first", "t"), Claim("2", "ns", "second", "t")])
    claims.release("ns", "first")
    assert claims.owner("t") == ("ns", "second")
    claims.release("ns", "second")
    assert claims.owner("t") is None
    assert len(claims) == 0
    claims.release("ns", "never-seen")  # a DELETED event for an unknown resource


def test_a_renamed_topic_moves_the_claim() -> None:
    claims = TopicClaims([Claim("1", "ns", "r", "old-name"), Claim("2", "ns", "s", "new-name")])
    claims.claim(Claim("1", "ns", "r", "new-name"))
    assert claims.owner("old-name") is None
    assert claims.owner("new-name") == ("ns", "r")
    assert len(claims) == 2


def test_a_claim_names_spec_topic_name_or_the_resource() -> None:
    meta = {"creationTimestamp": "2026-01-01T00:00:00Z"}
    assert claim_of("ns", "r", {"topicName": "t.x"}, meta) == Claim(meta["creationTimestamp"],
                                                                  "ns", "r", "t.x")  # fmt: skip
    assert claim_of(None, "r", {}, {}).topic == "r"
    assert claim_of(None, "r", {}, {}).namespace == ""


def test_claims_stay_consistent_under_concurrent_updates() -> None:
    claims = TopicClaims()

    def churn(worker: int) -> None:
        for i in range(2000):
            claims.claim(Claim(str(i), "ns", f"w{worker}", f"t{i % 7}"))
            claims.owner(f"t{i % 7}")
        claims.release("ns", f"w{worker}")

    threads = [threading.Thread(target=churn, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claims) == 0
    assert all(claims.owner(f"t{i}") is None for i in range(7))
