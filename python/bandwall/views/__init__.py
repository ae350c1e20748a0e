"""Terminal and CSV views of records, one module per domain (stream, iso3dfd, topo, ...).

Views read records and domain constants; they never run anything and never import commands.
"""
