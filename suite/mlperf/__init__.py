"""MLPerf Training interoperability, both ways.

- In: ``goodbench import mlperf`` reads MLCommons' published training results (submission
  trees of ``:::MLLOG`` event logs) into documents of their own kind under
  ``results/mlperf/``: the official score as MLCommons' result_summarizer computes it, and per
  run the time splits and goodput that no MLPerf table shows (:mod:`suite.mlperf.importer`).
- Out: goodbench's event logs carry MLPerf's required keys (:mod:`suite.mlperf.fields`), and
  ``goodbench export mlperf`` writes a results file as an MLCommons submission tree with a rule
  file per workload in MLCommons' rule language (:mod:`suite.mlperf.export`,
  :mod:`suite.mlperf.rules`).

Nothing here imports torch; MLCommons' ``mlperf_logging`` is imported inside the functions that
need it (the import and the compliance check), never at module level.
"""
