"""The results store: submitted files, content-addressed and never overwritten, and the ledger of the order they were stored in."""
