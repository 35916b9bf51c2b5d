"""The NanoGPT speedrun (modded-nanogpt) history: its README's record tables and training logs,
read from a checkout and recomputed (``goodbench import speedrun DIR`` → results/speedrun/)."""
