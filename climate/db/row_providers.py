"""Inventory rows that are providers of the capacity ledger, one unit
each (floating IP addresses, network segments).

Such a row's provider id is ``<kind>:<row id>``; what a reservation
holds is read from the ledger and turned back into rows here, the one
place that knows the naming.
"""

import sqlalchemy as sa

from climate.db.ledger import booking


class RowProviders(object):
    """The naming between rows of ``model`` and providers of ``kind``."""

    def __init__(self, kind, model):
        self.kind = kind
        self.prefix = kind + ':'
        self.model = model

    def provider(self, row_id):
        """The ledger provider id of row ``row_id``."""
        return self.prefix + str(row_id)

    def row_id_of(self, provider_id):
        """The row id of a ledger provider id (None when not one's)."""
        text = str(provider_id)
        return text[len(self.prefix):] if text.startswith(
            self.prefix) else None

    def by_providers(self, session, provider_ids):
        """``{provider id: row}`` of the rows behind ``provider_ids``."""
        ids = sorted({self.row_id_of(p) for p in provider_ids} - {None})
        if not ids:
            return {}
        return {self.provider(r.id): r for r in session.execute(
            sa.select(self.model).where(self.model.id.in_(ids))).scalars()}

    def held_by(self, session, reservation_id, after=None):
        """``{provider id: row}`` of the rows the reservation books (with
        a booking ending after ``after``, when given)."""
        return self.by_providers(session, booking.providers_of(
            session, reservation_id, self.kind, after))
