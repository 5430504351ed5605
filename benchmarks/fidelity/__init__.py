"""Multi-fidelity benchmark: conditional problems trained step by step,
samplers with pruners."""
