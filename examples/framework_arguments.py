"""The command line the framework examples share (``lightning_char.py``, ``hf_trainer_char.py``),
read before torch and the framework load (they take seconds), so that ``--help`` answers at once."""
from __future__ import annotations

import argparse


def arguments(description: str | None, default_out: str) -> argparse.Namespace:
    """An example's arguments: where its results file goes, steps, device, seeds and data folder."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=default_out)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--data-dir", default=None,
                        help="a folder holding the pinned dataset files (default: $GOODBENCH_DATA_DIR, then the user cache)")
    return parser.parse_args()
