"""What a plugin is handed about a lease, its reservations and its events:
typed values.

The API's view of a lease (``climate.lease.views``) renders its dates as
text, for the wire and for notifications.  Plugins compute with the dates
(bookings over the window, a backend's window): handed the view, each
parsed them back, so that a create rendered and parsed every date twice.
The lease service builds these values from the rows instead; the view is
rendered once, for the answer.

A reservation is handed as a :class:`Reservation`: its ids, status and
flags, and its parameters as stored (parsed JSON) apart from them, so
that a parameter can never pass for a field.

The attribute names are the rows' (``climate.db.models``), so a helper
taking a :class:`Lease` or a :class:`Reservation` takes the row as well.
"""

import dataclasses
import datetime

from climate import dates
from climate.lease import views


@dataclasses.dataclass(frozen=True)
class Lease:
    """A lease as it is when the plugin is called (frozen: a lease being
    updated is handed twice, as it was and as it will be)."""

    id: str
    name: str
    project_id: str
    user_id: str
    #: the Keystone trust acting as the lease's creator, None without one
    #: (``noauth``)
    trust_id: object
    status: str
    lease_type: object
    start_date: datetime.datetime
    end_date: datetime.datetime

    @classmethod
    def of(cls, row):
        """The value of a lease's row (``climate.db.models.Lease``)."""
        return cls(id=row.id, name=row.name, project_id=row.project_id,
                   user_id=row.user_id, trust_id=row.trust_id,
                   status=row.status, lease_type=row.lease_type,
                   start_date=row.start_date, end_date=row.end_date)

    @classmethod
    def from_view(cls, view):
        """The value of a lease's view (a lease the lease service has only
        as its answer, after the transaction that wrote it)."""
        return cls(id=view['id'], name=view['name'],
                   project_id=view['project_id'],
                   user_id=view.get('user_id'),
                   trust_id=view.get('trust_id'), status=view['status'],
                   lease_type=view.get('lease_type'),
                   start_date=dates.parse_output(view['start_date']),
                   end_date=dates.parse_output(view['end_date']))


@dataclasses.dataclass(frozen=True)
class Event:
    """The event whose action a plugin runs (``on_start``, ``before_end``,
    ``on_end``)."""

    id: str
    event_type: str
    time: datetime.datetime
    #: this attempt's number: a retry has more than 1
    attempts: int

    @classmethod
    def of(cls, row):
        """The value of an event's row (``climate.db.models.Event``)."""
        return cls(id=row.id, event_type=row.event_type, time=row.time,
                   attempts=row.attempts)


@dataclasses.dataclass(frozen=True)
class Reservation:
    """A reservation as it is when the plugin is called."""

    id: str
    lease_id: str
    resource_type: str
    #: what the plugin's ``reserve`` returned, None before or without
    resource_id: object
    status: str
    #: the reservation whose needs this one holds (a stack's), or None
    part_of: object
    missing_resources: bool
    resources_changed: bool
    #: the stored parameters (a copy: the row's stay as they are)
    params: dict

    @classmethod
    def of(cls, row):
        """The value of a reservation's row
        (``climate.db.models.Reservation``)."""
        return cls(id=row.id, lease_id=row.lease_id,
                   resource_type=row.resource_type,
                   resource_id=row.resource_id, status=row.status,
                   part_of=row.part_of,
                   missing_resources=row.missing_resources,
                   resources_changed=row.resources_changed,
                   params=dict(row.params or {}))

    @classmethod
    def from_view(cls, view):
        """The value of a reservation's view (``climate.lease.views
        .reservation``: a lease the lease service has only as its
        answer)."""
        return cls(id=view['id'], lease_id=view['lease_id'],
                   resource_type=view['resource_type'],
                   resource_id=view['resource_id'], status=view['status'],
                   part_of=view['stack_reservation_id'],
                   missing_resources=view['missing_resources'],
                   resources_changed=view['resources_changed'],
                   params=views.reservation_params(view))

    def as_dict(self):
        """The parameters with the ids, status and flags in one dict: the
        shape a backend's contract takes a reservation in."""
        return dict(self.params, id=self.id, lease_id=self.lease_id,
                    resource_type=self.resource_type,
                    resource_id=self.resource_id, status=self.status,
                    missing_resources=self.missing_resources,
                    resources_changed=self.resources_changed,
                    stack_reservation_id=self.part_of)


def reservation_pairs(row):
    """``(row, value)`` of each reservation of the lease ``row``, as
    stored: what the plugins are handed."""
    return [(res, Reservation.of(res)) for res in row.reservations]


def in_run_order(parts_first, pairs):
    """``(row, value)`` pairs of a lease's reservations in the order
    their actions run: the parts of a reservation (those holding a
    stack's needs, ``part_of``) before the others at the start, after
    them at the end (a stack is made once what it uses exists, and gone
    before that is taken back); otherwise as stored."""
    return sorted(pairs, key=lambda pair: (
        pair[0].part_of is None) == parts_first)
