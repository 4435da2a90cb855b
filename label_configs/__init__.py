"""goldboard.label_configs."""
