"""Climate's Heat resource plugin (runs inside heat-engine, not Climate).

This package deliberately imports nothing: heat-engine loads
``climate_lease.py`` from this directory, named in heat.conf's
``plugin_dirs``, as a module of its own, so that neither ``climate`` nor
its requirements need to be installed beside Heat.
"""
