"""Who stands behind a result: signatures, the fingerprint that tells one run from another, ownership of runs, the trusted reviewers."""
