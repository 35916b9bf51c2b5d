"""The JSON Schema of the results format, shipped with the package."""
import json
from functools import cache
from importlib.resources import files


@cache
def results_schema(version: int = 1) -> dict:
    """The JSON Schema (draft 2020-12) of results format ``version``."""
    return json.loads(files(__package__).joinpath(f"results-v{version}.json").read_text())
