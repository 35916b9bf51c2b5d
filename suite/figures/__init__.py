"""Every figure of a results file, derived from its raw records: throughput, TTA, goodput, projections, per-workload summaries, the run's summary tables."""
