"""goodbench's reference workloads: each module holds one pinned spec, its model, data, FLOP model and eval."""
