"""goldboard.adjudicate."""
