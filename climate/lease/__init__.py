"""A lease's own rules, below the API, the manager and the database: what
a request may say (``input``), the lease types (``types``), its events
(``events``) and how it is shown (``views``).  Pure: no I/O, nothing of
the layers above."""
