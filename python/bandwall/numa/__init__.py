"""NUMA placement: the numa-check experiment, the placement matrix, page placement."""
