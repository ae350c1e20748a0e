"""Pinning the threads of unmodified programs (bandwall-pin and its library)."""
