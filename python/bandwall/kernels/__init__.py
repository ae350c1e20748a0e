"""bandwall's own kernels: STREAM, the core-count sweep, the byte/flop balance and ISO3DFD."""
