"""Where a plan is computed: the Kubernetes Job and SparkApplication each engine runs, and how the
operator follows them."""
