"""Multi-fidelity benchmark (issue 28): conditional problems trained step by step,
samplers with pruners."""
