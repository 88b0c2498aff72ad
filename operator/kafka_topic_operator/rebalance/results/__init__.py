"""What a plan changes: the summary for status, the plan cut into ConfigMap-sized parts, and the
HTML report."""
