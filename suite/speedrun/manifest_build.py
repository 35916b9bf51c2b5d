"""``python -m suite.speedrun.manifest_build CHECKOUT``: the manifest of a pinned commit
(:mod:`suite.speedrun.manifest`) regenerated from a clean checkout at that commit, written to
suite/speedrun/pinned/<commit>.tsv. Run it when :data:`suite.speedrun.tree.PINNED` changes."""
from __future__ import annotations

import sys
from pathlib import Path

from suite.speedrun import importer, manifest
from suite.speedrun.tree import PINNED


def build(root: Path) -> tuple[str, str]:
    """(commit, manifest text) of the checkout at ``root``; :class:`ValueError` where its files
    are not verified against a pinned commit (a manifest is only ever of one)."""
    docs = importer.build_documents(root)
    commit = docs[1]["commit"]
    if commit not in PINNED or any(d["commit"] != commit for d in docs.values()):
        raise ValueError(f"{root}: its files are not verified against a pinned commit ({commit}): no manifest")
    return commit, manifest.dumps(commit, docs)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m suite.speedrun.manifest_build CHECKOUT", file=sys.stderr)
        return 2
    commit, text = build(Path(argv[0]))
    manifest.FOLDER.mkdir(exist_ok=True)
    manifest.path_of(commit).write_text(text, encoding="utf-8")
    print(f"{manifest.path_of(commit)}: {text.count(chr(10)) - 2} logs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
