"""Every figure of a results file, derived from its raw records, and every formula of them, pure (no
torch, no device): throughput and its window, MFU and the peak table, TTA scoring, goodput,
projections, per-workload summaries, the run's summary tables."""
