"""Climate's Nova scheduler filter (runs inside nova-scheduler, not Climate).

This package deliberately imports nothing: ``climate_filter.py`` is loaded
by nova-scheduler as a top-level module (``climate_filter.ClimateFilter``)
with this directory on its ``PYTHONPATH``, so that neither ``climate``'s
own ``__init__`` nor any of Climate's dependencies enters Nova's process.
See ``doc/source/nova-filter.rst``.
"""
