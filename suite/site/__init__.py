"""``goodbench site``: render the results directory into a static, self-contained site.

Layout of the output folder (every name derived from results goes through
:func:`suite.site.names.safe_name`, that is ``suite.store.files.safe_filename`` plus a hash): ``index.html``,
``compare.html``, ``workloads/<workload>.html`` (+ ``-p<N>.html`` pages and ``.csv``/``.json``
downloads per table; a CSV string cell that a spreadsheet would run as a formula starts with ``'``), ``systems/<system>.html``, ``runs/<run>.html``, ``raw/<file>.json`` (each
valid results file, byte for byte: a copy, never a link into the results folder),
``raw/<run>-events.txt`` (a run's event log, control characters escaped) and ``static/`` (CSS and JS).

The package, by page:

- ``builder``: the build (gather the files, the worker pool, write every page);
- ``pages``: the workload, system, compare and index pages;
- ``run_page``: a run's page (its tables, distributed section and event log text);
- ``tables``: the leaderboard's columns, cells, paged tables and their downloads;
- ``charts``: the charts, inline SVG drawn at build time;
- ``labels``: every shown field's label and unit (the one table), keyed by its path in the results file;
- ``formatting``, ``names``, ``render``: figures as text with their units, safe file names, templates;
- ``templates/`` and ``static/``: the Jinja templates and the CSS/JS, package data.
"""
__all__ = ["build"]


def __getattr__(name: str):
    """``build``, loaded on first use: the builder brings pandas and every page module, which a
    command that only checks its folders first (``goodbench site``'s first line) does not need."""
    if name == "build":
        from suite.site.builder import build

        return build
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
