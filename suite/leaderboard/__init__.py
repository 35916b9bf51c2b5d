"""Results files to leaderboard rows and entries, and how far each entry can be trusted."""
