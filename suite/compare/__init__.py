"""``goodbench compare``: two sides' headline figures, their estimates and intervals, the statistics, the report."""
