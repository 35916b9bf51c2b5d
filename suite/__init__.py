"""goodbench: a standardized GPU training benchmark suite with a static leaderboard."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("goodbench")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.1.0"
