"""Prometheus' own promtool for the tests of the chart's PrometheusRule (`promtool check rules`,
`promtool test rules`): built with Go from Prometheus' module (`build`)."""
