"""Hardware and software counters around a command or a kernel, and the counter groups."""
