"""The Spark planner: replica counts, leaders and the swap goals as DataFrame rounds, and the
SparkSession they run in."""
