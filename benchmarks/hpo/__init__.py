"""The real-HPO benchmark suite: tasks declared once (spec.py), run by every sampler."""
