"""Quality benchmarks (LoCoMo evidence recall)."""
