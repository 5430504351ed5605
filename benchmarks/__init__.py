"""Benchmark problems and runner for the ``condsamplers`` conditional-space samplers."""
