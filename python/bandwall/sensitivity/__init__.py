"""`bandwall sensitivity`: how an unmodified program depends on memory bandwidth, latency and cache,
told without hardware counters by the bandwidth bandit and the cache pirate."""
