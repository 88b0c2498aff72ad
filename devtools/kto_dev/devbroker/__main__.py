"""`python -m kto_dev.devbroker`: the same as `kto dev-broker`."""

from kto_dev.devbroker.cli import main

raise SystemExit(main())
