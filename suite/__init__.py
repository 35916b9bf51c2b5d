"""goodbench: a standardized GPU training benchmark suite with a static leaderboard."""
from suite import import_path

import_path.drop_working_folder()  # first, before any import a folder could shadow (suite/import_path.py)

from importlib.metadata import PackageNotFoundError, version  # noqa: E402

try:
    __version__ = version("goodbench")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.1.0"
