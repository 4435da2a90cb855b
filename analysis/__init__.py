"""goldboard.analysis."""
