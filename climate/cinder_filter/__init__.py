"""Climate's Cinder scheduler filter (runs in cinder-scheduler, not Climate).

This package deliberately imports nothing: ``climate_cinder_filter.py`` is
loaded by cinder-scheduler as a top-level module
(``climate_cinder_filter.ClimateCinderFilter``) with this directory on its
``PYTHONPATH``, so that neither ``climate``'s own ``__init__`` nor any of
Climate's dependencies enters Cinder's process.  See
``doc/source/cinder-filter.rst``.
"""
