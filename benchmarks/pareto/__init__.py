"""Multi-objective benchmark over conditional spaces."""
