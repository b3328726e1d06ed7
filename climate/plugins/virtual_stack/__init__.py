"""The ``virtual:stack`` resource: a Heat stack's needs as reservations."""
