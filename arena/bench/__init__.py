"""Benchmarks: measurements that print figures (never timed tests). One module per subject."""
