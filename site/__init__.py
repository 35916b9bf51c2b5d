"""Templates and static assets of the leaderboard site (installed as ``goodbench_site``)."""
