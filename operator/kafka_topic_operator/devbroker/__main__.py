"""`python -m kafka_topic_operator.devbroker`: the same as `kto dev-broker`."""

from kafka_topic_operator.devbroker.cli import main

raise SystemExit(main())
