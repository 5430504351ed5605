"""Multi-objective benchmark over conditional spaces (issue 29)."""
