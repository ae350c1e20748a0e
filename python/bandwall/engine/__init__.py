"""Copy engines and the pipelined STREAM kernels, and the engine sweep."""
