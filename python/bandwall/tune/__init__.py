"""bandwall tune: the space of knobs (space), the search (search), the trials and their store
(trials), what a trial runs (targets), the pruning by what bandwall already knows (guide), the
command lines of a configuration (command) and the tune record (tune)."""
