"""What a dev broker follows from one leader: the partitions it is a follower of with that
leader, each at the leader epoch its LeaderAndIsr gave, published by the follower at
`paths.fetching_path(follower, leader)`.

It stands in for Kafka's Fetch requests. A leader admits a replica to a partition's ISR only
once the replica fetches from it at the leader's current epoch (Partition.maybeExpandIsr runs
on a follower's fetch; an older or newer epoch is refused), so never before the controller has
made the replica a follower. A dev broker holds no data: following is being caught up.

{"version":1,"partitions":{"orders":{"0":5,"1":5}}}  (partition → leader epoch)
"""

from __future__ import annotations

from kafka_topic_operator.broker_channel.partition_maps import (
    PartitionMap,
    decode_partition_map,
    encode_partition_map,
)

Following = PartitionMap
"""Each topic's partitions followed from one leader, each with the leader epoch followed."""


# The shared shape's codec, under this publication's name.
encode_fetching = encode_partition_map
decode_fetching = decode_partition_map
