"""The planning algorithms, pure: the cluster model, lower bounds, goals, the feasibility check,
min-cost flows, the exact plan, the topic spread, and Kafka's --generate replayed."""
