"""``goodbench keygen``: make the Ed25519 key that signs the results files this user writes
(suite/trust/signing.py; docs/rules.md, "Signed results")."""
from __future__ import annotations

import argparse


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench keygen`` (no arguments)."""
    return commands.add_parser("keygen", help="make the Ed25519 key that signs your results files",
                               description="Make a signing key in $GOODBENCH_CONFIG_DIR, else "
                               "$XDG_CONFIG_HOME/goodbench, else ~/.config/goodbench (never over an existing "
                               "one). `goodbench run` and `goodbench reproduce` then sign the files they "
                               "write (docs/rules.md, \"Signed results\").")


def run(args) -> int:
    """Make the key and say where it is; 1 (an error naming the file) when one exists already."""
    from suite.trust import signing

    path, fingerprint = signing.keygen()
    print(f"signing key {fingerprint} written to {path} (mode 0600; public key beside it, "
          f"{signing.PUBLIC_FILE}); `goodbench run`, `run-own` and `reproduce` and a Benchmark sign their results "
          "with it from now on")
    return 0
