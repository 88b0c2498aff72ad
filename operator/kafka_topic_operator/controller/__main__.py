"""`python -m kafka_topic_operator.controller`: the same as `kto controller`."""

from kafka_topic_operator.controller.cli import main

raise SystemExit(main())
