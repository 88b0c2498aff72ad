"""What every `kto` command's process shares: argument parsing that raises instead of exiting,
Kafka's log line format, garbage-collector tuning, and compact JSON output."""
