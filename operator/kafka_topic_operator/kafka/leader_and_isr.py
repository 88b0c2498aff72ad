"""LeaderAndIsr (kafka/api/LeaderAndIsr.scala): a partition's leader, epoch and ISR.

`partition_epoch` is the state znode's zkVersion: the helpers keep it unchanged, and the ZooKeeper
write that stores the new value returns the next one.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import NamedTuple

NO_LEADER = -1
LEADER_DURING_DELETE = -2
NO_EPOCH = -1
EPOCH_DURING_DELETE = -2
INITIAL_LEADER_EPOCH = 0
INITIAL_PARTITION_EPOCH = 0


class LeaderRecoveryState(IntEnum):
    """KIP-704: RECOVERING after an unclean election (IBP >= 3.2), RECOVERED otherwise."""

    RECOVERED = 0
    RECOVERING = 1


# Named tuples, not frozen dataclasses: a broker failure makes tens of thousands of each, and a
# named tuple is built in a third of a frozen dataclass's time.
class LeaderAndIsr(NamedTuple):
    leader: int
    isr: tuple[int, ...]
    leader_epoch: int = INITIAL_LEADER_EPOCH
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED
    partition_epoch: int = INITIAL_PARTITION_EPOCH

    @classmethod
    def initial(cls, leader: int, isr: Iterable[int]) -> LeaderAndIsr:
        return cls(leader=leader, isr=tuple(isr))

    @classmethod
    def during_delete(cls, isr: Iterable[int]) -> LeaderAndIsr:
        """What UpdateMetadata carries for a topic queued for deletion."""
        return cls(leader=LEADER_DURING_DELETE, isr=tuple(isr))

    def new_leader(self, leader: int) -> LeaderAndIsr:
        return self.new_leader_and_isr(leader, self.isr)

    def new_leader_and_isr(self, leader: int, isr: Iterable[int]) -> LeaderAndIsr:
        """The recovery state is kept: only the leader's own ISR update marks a RECOVERING
        partition RECOVERED (LeaderAndIsr.scala newLeaderAndIsr)."""
        # The constructor, not _replace: a broker failure makes tens of thousands.
        return LeaderAndIsr(leader, tuple(isr), self.leader_epoch + 1,
                            self.leader_recovery_state, self.partition_epoch)  # fmt: skip

    def new_recovering_leader_and_isr(self, leader: int, isr: Iterable[int]) -> LeaderAndIsr:
        return self.new_leader_and_isr(leader, isr)._replace(
            leader_recovery_state=LeaderRecoveryState.RECOVERING
        )

    def with_partition_epoch(self, partition_epoch: int) -> LeaderAndIsr:
        return LeaderAndIsr(self.leader, self.isr, self.leader_epoch,
                            self.leader_recovery_state, partition_epoch)  # fmt: skip

    @property
    def has_leader(self) -> bool:
        return self.leader >= 0


class LeaderIsrAndControllerEpoch(NamedTuple):
    """A partition state znode: LeaderAndIsr plus the epoch of the controller that wrote it."""

    leader_and_isr: LeaderAndIsr
    controller_epoch: int
