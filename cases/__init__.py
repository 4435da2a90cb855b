"""goldboard.cases."""
