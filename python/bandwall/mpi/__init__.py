"""MPI: implementations and launchers, the profiler, ping-pong, rails, flat-MPI STREAM, ISO3DFD over ranks."""
