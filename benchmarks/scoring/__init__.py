"""The rules several benchmarks share: answer extraction (letters, yes/no, numbers), MRA, exact match, the metric
registry and the aggregation kinds."""
