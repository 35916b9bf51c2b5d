"""goodbench's measurement as a library for one's own training loop (docs/own-code.md): the
stage above :mod:`suite.run`, whose meters, event log and record it drives from the user's calls
instead of a reference workload's job. The public names are re-exported by :mod:`goodbench`."""
