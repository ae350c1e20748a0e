"""The interference experiment of the T2K study: a memory-bound kernel on every core and on the
knee's cores, each alone and beside a noise process, and whether leaving the surplus cores free
pays on this machine (`noise` starts and stops the noise, `experiment` runs the rounds and makes the
record, `verdict` reads a record)."""
