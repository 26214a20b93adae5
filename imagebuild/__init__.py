"""Rendered config -> image plan -> Containerfile + context | OCI layout -> push."""
