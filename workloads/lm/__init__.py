"""What the language-model workloads share: their spec, the training run, the GPT model and its FLOP model, and pinned synthetic tokens."""
