"""gpt2-124m: GPT-2 small on pinned synthetic tokens (spec; job). Its model is workloads.lm.gpt."""
