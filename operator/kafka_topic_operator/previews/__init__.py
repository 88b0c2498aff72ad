"""Offline previews of Kafka's placement rules, no cluster needed: `kto assign` (where Kafka places
a topic's replicas), `kto partition-for` (the producer's partition for a key) and `kto consumers`
(a consumer group's assignment). Each module adds its subcommand (`add_command`)."""
