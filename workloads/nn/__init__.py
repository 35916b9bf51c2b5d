"""Model building blocks shared by more than one workload."""
