"""The `mco` command: the one place that turns exceptions into exit codes."""
