"""`python -m kafka_topic_operator.cli`: `kto`, as the tests and the dev cluster start it."""

import sys

from kafka_topic_operator.cli.main import main

sys.exit(main())
