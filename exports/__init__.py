"""goldboard.exports."""
