"""dlrm-small: a DLRM-style recommender on click data from a pinned teacher (spec; job; model; config; evaluator)."""
