"""Study-level orchestration: combine the pure analysis/adjudication layer with the Label Studio
adapter and the writers; the CLI calls one workflow per command."""
