"""SQL tables.  Changing one means writing an alembic migration too."""

import uuid

from oslo_utils import timeutils
import sqlalchemy as sa
from sqlalchemy import orm


def _uuid():
    return str(uuid.uuid4())


def _now():
    return timeutils.utcnow().replace(microsecond=0, tzinfo=None)


class Base(orm.DeclarativeBase):
    pass


class TimestampMixin:
    created_at = sa.Column(sa.DateTime, nullable=False, default=_now)
    updated_at = sa.Column(sa.DateTime, nullable=True, onupdate=_now)


class Lease(TimestampMixin, Base):
    __tablename__ = 'leases'
    __table_args__ = (
        sa.UniqueConstraint('project_id', 'name',
                            name='uniq_leases0project_id0name'),
        # keyset pagination, per project and across projects
        sa.Index('ix_leases_project_created', 'project_id', 'created_at',
                 'id'),
        sa.Index('ix_leases_created', 'created_at', 'id'),
        sa.Index('ix_leases_status', 'status'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    name = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    project_id = sa.Column(sa.String(255), nullable=False)
    trust_id = sa.Column(sa.String(255), nullable=True)
    start_date = sa.Column(sa.DateTime, nullable=False)
    end_date = sa.Column(sa.DateTime, nullable=False)
    status = sa.Column(sa.String(32), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    degraded = sa.Column(sa.Boolean, nullable=False, default=False)

    reservations = orm.relationship(
        'Reservation', back_populates='lease', cascade='all, delete-orphan',
        passive_deletes=True, order_by='Reservation.created_at')
    events = orm.relationship(
        'Event', back_populates='lease', cascade='all, delete-orphan',
        passive_deletes=True, order_by='Event.time')


class Reservation(TimestampMixin, Base):
    __tablename__ = 'reservations'

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    lease_id = sa.Column(sa.String(36),
                         sa.ForeignKey('leases.id', ondelete='CASCADE'),
                         nullable=False, index=True)
    resource_type = sa.Column(sa.String(66), nullable=False)
    resource_id = sa.Column(sa.String(255), nullable=True)
    status = sa.Column(sa.String(32), nullable=False)
    # the plugin's parameters, as the user gave them after validation
    params = sa.Column(sa.JSON, nullable=False, default=dict)
    missing_resources = sa.Column(sa.Boolean, nullable=False, default=False)
    resources_changed = sa.Column(sa.Boolean, nullable=False, default=False)

    lease = orm.relationship('Lease', back_populates='reservations')


class Event(TimestampMixin, Base):
    __tablename__ = 'events'
    __table_args__ = (
        # the claim query: due events by status, earliest first
        sa.Index('ix_events_status_due', 'status', 'due_at'),
        # the claim, one event type at a time
        sa.Index('ix_events_status_type_due', 'status', 'event_type',
                 'due_at'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    lease_id = sa.Column(sa.String(36),
                         sa.ForeignKey('leases.id', ondelete='CASCADE'),
                         nullable=False, index=True)
    event_type = sa.Column(sa.String(66), nullable=False)
    # when the event is meant to happen (what users see)
    time = sa.Column(sa.DateTime, nullable=False)
    # when an engine should next look at it: time, a retry, or a claim's end
    due_at = sa.Column(sa.DateTime, nullable=False)
    status = sa.Column(sa.String(32), nullable=False)
    attempts = sa.Column(sa.Integer, nullable=False, default=0)
    claimed_by = sa.Column(sa.String(255), nullable=True)
    claim_token = sa.Column(sa.String(36), nullable=True)
    last_error = sa.Column(sa.Text, nullable=True)

    lease = orm.relationship('Lease', back_populates='events')


class Allocation(Base):
    """A concrete resource held by a reservation over a time window."""

    __tablename__ = 'allocations'
    __table_args__ = (
        # overlap search: resource, then window (end > start_wanted AND
        # start < end_wanted)
        sa.Index('ix_allocations_resource_window', 'resource_type',
                 'resource_id', 'start_date', 'end_date'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    reservation_id = sa.Column(
        sa.String(36), sa.ForeignKey('reservations.id', ondelete='CASCADE'),
        nullable=False, index=True)
    resource_type = sa.Column(sa.String(66), nullable=False)
    resource_id = sa.Column(sa.String(255), nullable=False)
    start_date = sa.Column(sa.DateTime, nullable=False)
    end_date = sa.Column(sa.DateTime, nullable=False)


class NoopAction(Base):
    """What the noop plugin was asked to do: one row per execution."""

    __tablename__ = 'noop_actions'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    action = sa.Column(sa.String(32), nullable=False)
    lease_id = sa.Column(sa.String(36), nullable=False, index=True)
    reservation_id = sa.Column(sa.String(36), nullable=False)
    event_id = sa.Column(sa.String(36), nullable=True)
    manager = sa.Column(sa.String(255), nullable=True)
    created_at = sa.Column(sa.DateTime, nullable=False, default=_now)
