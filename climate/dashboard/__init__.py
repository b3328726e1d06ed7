"""Climate's Horizon plugin: the Reservations panels of the project and
admin dashboards (doc/source/dashboard.rst).

Horizon finds the panels through the files of ``enabled/``, copied or
linked into ``openstack_dashboard/local/enabled/``; ``api/climate.py`` is
their one way to the reservation API.
"""
