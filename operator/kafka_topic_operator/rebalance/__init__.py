"""Cluster-wide rebalancing, from a KafkaRebalance's spec to a carried-out plan.

`spec` reads the spec; `inputs` and `sizes` turn the cluster into a `planning_io.PlanningInput`;
a plan is computed by `algorithms/` (pure), on the driver (`in_process`) or by the Spark planner
(`spark/`) inside the planning job (`job`, run where an engine of `engines/` says); `results/`
sums it up for status, the plan ConfigMaps and the report; `execution/` carries it out.
`kto plan` is in `cli/plan.py`, above the cluster connections it reads through.
"""
