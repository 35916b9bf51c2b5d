"""The package's templates and static files: render one page into the output folder, copy the assets."""
from __future__ import annotations

import shutil
from functools import cache
from importlib.resources import files
from pathlib import Path

import jinja2

from suite import __version__
from suite.site.formatting import num, pct

PACKAGE = "suite.site"  # templates/ and static/ are its package data


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(files(PACKAGE).joinpath("templates"))),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = num
    env.filters["pct"] = pct
    return env


def render(template: str, path: Path, **context) -> None:
    """Write ``template`` rendered with ``context`` (and the suite version) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    html = _environment().get_template(template).render(suite_version=__version__, **context)
    path.write_text(html, encoding="utf-8")


def copy_static(dest: Path) -> None:
    """Copy the CSS and JS files into ``dest``."""
    for asset in files(PACKAGE).joinpath("static").iterdir():
        if asset.is_file():
            shutil.copyfile(str(asset), dest / asset.name)
