"""The ``climate`` command line client.

- :mod:`climate.cli.client`: the v1 REST API over a keystoneauth session
  (Keystone or noauth);
- :mod:`climate.cli.shell`: the cliff/osc-lib application and its options;
- :mod:`climate.cli.leases`, :mod:`climate.cli.hosts`,
  :mod:`climate.cli.availability`: the commands;
- :mod:`climate.cli.timeline`: the text Gantt chart (pure functions);
- :mod:`climate.cli.plot`: the free-capacity plot (matplotlib, optional).
"""
