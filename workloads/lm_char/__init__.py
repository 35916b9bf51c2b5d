"""lm-char: nanoGPT's shakespeare-char model on Tiny Shakespeare (spec; job; evaluator)."""
