"""llama-1b: a Llama-style 1.24B decoder on pinned synthetic tokens (spec; job; model; config)."""
