"""bandwall: find and break the memory wall on NUMA multicore nodes."""

__version__ = "0.1.0"
