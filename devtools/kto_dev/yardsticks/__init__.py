"""Yardsticks for the rebalance planners, used by the tests and `make bench`, never shipped: the
reference planner (plain Python, deterministic: the fewest replica moves one at a time, then
swaps and leaders) and sample clusters shaped as Kafka leaves them when it grows."""
