"""A dev broker's metadata as a client would be told it: each partition's leader in the broker's
metadata cache (what its UpdateMetadata requests said), published at `paths.metadata_path` by
the broker once it applied them. A dev broker has no Kafka listener to ask, so this is its
acknowledgement: the operator's Ready waits until every broker's shows every partition led.

{"version":1,"partitions":{"orders":{"0":1,"1":-1}}}  (leader -1: none)
"""

from __future__ import annotations

from kafka_topic_operator.broker_channel.partition_maps import (
    PartitionMap,
    decode_partition_map,
    encode_partition_map,
)

Leaders = PartitionMap
"""Each topic's partitions, each with its leader (-1: none)."""


# The shared shape's codec, under this publication's name.
encode_metadata_leaders = encode_partition_map
decode_metadata_leaders = decode_partition_map
