"""ReplicaAssignment (ControllerContext.scala) with KIP-455's adding and removing replicas.

During a reassignment the topic znode's replica list is the union of the target and the origin
(target first); `adding` are the replicas being added and `removing` those being removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def _distinct(ids: Iterable[int]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(ids))


def _minus(ids: Sequence[int], other: Iterable[int]) -> tuple[int, ...]:
    drop = set(other)
    return tuple(i for i in ids if i not in drop)


def invalid_target(target: Sequence[int]) -> str | None:
    """Why a reassignment target is not one (Kafka's Admin API refuses these; its ZooKeeper
    path takes them, and never finishes them), or None."""
    if not target:
        return "the replica list is empty"
    if len(set(target)) != len(target):
        return "the replica list has duplicate brokers"
    if any(r < 0 for r in target):
        return "the replica list has a negative broker id"
    return None


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @classmethod
    def of(
        cls,
        replicas: Iterable[int],
        adding: Iterable[int] = (),
        removing: Iterable[int] = (),
    ) -> ReplicaAssignment:
        return cls(tuple(replicas), tuple(adding), tuple(removing))

    @classmethod
    def from_origin_and_target(
        cls, origin: Sequence[int], target: Sequence[int]
    ) -> ReplicaAssignment:
        full = _distinct([*target, *origin])
        return cls(full, _minus(full, origin), _minus(full, target))

    @property
    def origin_replicas(self) -> tuple[int, ...]:
        return _minus(self.replicas, self.adding_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        return _minus(self.replicas, self.removing_replicas)

    @property
    def is_being_reassigned(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    def reassign_to(self, target: Sequence[int]) -> ReplicaAssignment:
        """The assignment while moving from this one's origin to `target` (reassignTo)."""
        return ReplicaAssignment.from_origin_and_target(self.origin_replicas, target)

    def remove_replica(self, replica: int) -> ReplicaAssignment:
        return ReplicaAssignment(
            _minus(self.replicas, [replica]),
            _minus(self.adding_replicas, [replica]),
            _minus(self.removing_replicas, [replica]),
        )

    def __str__(self) -> str:
        return (
            f"ReplicaAssignment(replicas={','.join(map(str, self.replicas))}, "
            f"addingReplicas={','.join(map(str, self.adding_replicas))}, "
            f"removingReplicas={','.join(map(str, self.removing_replicas))})"
        )
