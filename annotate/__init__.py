"""goldboard.annotate."""
