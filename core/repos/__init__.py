"""Real repositories: git, a worktree per run, and completion claims checked against git."""
