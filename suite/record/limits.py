"""The hostile-input limits (docs/rules.md, "Hostile input"): checked before any rule, so that no
input can crash or slow the validator."""
from __future__ import annotations

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 32            # nested objects/arrays
MAX_ARRAY_ITEMS = 100_000  # step_times_s of the longest full-scale run fits with room to spare
MAX_OBJECT_KEYS = 1_000
MAX_STRING_CHARS = 2_000
MAX_KEY_CHARS = 100
MAX_INT = 2 ** 63
MAX_PROBLEMS = 100         # listed per file; the rest are counted in one more line
