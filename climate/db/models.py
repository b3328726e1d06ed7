"""SQL tables.  Changing one means writing an alembic migration too."""

import uuid

from oslo_utils import timeutils
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy import orm


def _uuid():
    return str(uuid.uuid4())


def now():
    """The time the database stores: UTC, naive, whole seconds."""
    return timeutils.utcnow().replace(microsecond=0, tzinfo=None)


class Base(orm.DeclarativeBase):
    pass


#: A lease's stored JSON body: TEXT stops at 64 KiB on MariaDB.
LEASE_BODY = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')


class TimestampMixin:
    created_at = sa.Column(sa.DateTime, nullable=False, default=now)
    updated_at = sa.Column(sa.DateTime, nullable=True, onupdate=now)


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
        sa.Index('ix_leases_waiting', 'status', 'arrival', 'id'),
        sa.Index('ix_leases_holds', 'status', 'hold_expires_at'),
        # an occurrence of a series is made once, whichever manager (or
        # node of a cluster) makes it
        sa.Index('uniq_leases0series_id0occurrence', 'series_id',
                 'occurrence', unique=True),
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
    # climate.lease.types: the lease's promise (null: none asked)
    lease_type = sa.Column(sa.String(16), nullable=True)
    # a with_retries lease's attempts while it waits
    max_retries = sa.Column(sa.Integer, nullable=True)
    retry_attempts = sa.Column(sa.Integer, nullable=True)
    next_attempt_at = sa.Column(sa.DateTime, nullable=True)
    # seconds asked for by a with_retries lease (dates set when granted)
    duration = sa.Column(sa.BigInteger, nullable=True)
    # when a with_retries create arrived, microseconds since the epoch
    # (created_at has seconds only): the waiting leases' order
    arrival = sa.Column(sa.BigInteger, nullable=True)
    # a best_effort lease's hunt for hosts (climate.manager.workers.hunts): the
    # plan, its deadline, the hosts it closed and those it borrowed
    hunt = sa.Column(sa.JSON, nullable=True)
    # a temporary hold's expiry (climate.lease.holds): HELD until then,
    # EXPIRED after it unless confirmed
    hold_expires_at = sa.Column(sa.DateTime, nullable=True)
    # an occurrence of a recurring series (climate.lease.recurrence): the
    # series and the occurrence's number from 0; null for other leases
    series_id = sa.Column(sa.String(36), nullable=True)
    occurrence = sa.Column(sa.Integer, nullable=True)
    # idle reclaim (climate.manager.idle): never for a lease that asked
    # to be kept; when its reservations were last seen used, and when
    # it was warned that nothing uses them
    keep_idle = sa.Column(sa.Boolean, nullable=False, default=False,
                          server_default=sa.false())
    last_used_at = sa.Column(sa.DateTime, nullable=True)
    idle_warned_at = sa.Column(sa.DateTime, nullable=True)
    # when idle reclaim moved its end (once: the managers that come after
    # find it set)
    idle_ended_at = sa.Column(sa.DateTime, nullable=True)
    # the lease's API body as a listing shows it, reservations and events
    # included, re-rendered by every transaction that changes them
    # (climate.db.lease_json); not loaded with the lease
    body = orm.deferred(sa.Column(LEASE_BODY, nullable=True))

    reservations = orm.relationship(
        'Reservation', back_populates='lease', cascade='all, delete-orphan',
        passive_deletes=True,
        order_by='(Reservation.created_at, Reservation.id)')
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
    # the reservation whose needs this one holds (a stack's), or null
    part_of = sa.Column(sa.String(36), nullable=True, index=True)

    lease = orm.relationship('Lease', back_populates='reservations')


class Event(TimestampMixin, Base):
    __tablename__ = 'events'
    __table_args__ = (
        # the claim query: due events by status, earliest first
        sa.Index('ix_events_status_due', 'status', 'due_at'),
        # the claim, one event type at a time
        sa.Index('ix_events_status_type_due', 'status', 'event_type',
                 'due_at'),
        # releasing the claims of a manager declared dead
        # (climate.db.managers)
        sa.Index('ix_events_status_claimed_by', 'status', 'claimed_by'),
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


#: A manager's heartbeat: the database's clock, to the microsecond
#: (DATETIME stops at the second on MariaDB).
HEARTBEAT_TIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                            'mariadb')


class Manager(Base):
    """A running climate-manager and its last heartbeat
    (``climate.manager.workers.heartbeat``)."""

    __tablename__ = 'managers'
    __table_args__ = (
        sa.Index('ix_managers_heartbeat_at', 'heartbeat_at'),
    )

    # the owner name of its claims (events.claimed_by)
    name = sa.Column(sa.String(255), primary_key=True)
    host = sa.Column(sa.String(255), nullable=True)
    pid = sa.Column(sa.Integer, nullable=True)
    started_at = sa.Column(HEARTBEAT_TIME, nullable=False)
    heartbeat_at = sa.Column(HEARTBEAT_TIME, nullable=False)


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
    created_at = sa.Column(sa.DateTime, nullable=False, default=now)


class IdempotencyKey(Base):
    """An Idempotency-Key a project sent with a lease create, written in
    the lease's own transaction: a create retried with the key finds the
    lease it made (``climate.db.idempotency``)."""

    __tablename__ = 'idempotency_keys'
    __table_args__ = (
        # the purge: expired keys, oldest first
        sa.Index('ix_idempotency_keys_expires', 'expires_at'),
    )

    project_id = sa.Column(sa.String(255), primary_key=True)
    idempotency_key = sa.Column(sa.String(255), primary_key=True)
    # SHA-256 of the request (canonical JSON): the same key with another
    # request is refused
    request_hash = sa.Column(sa.String(64), nullable=False)
    # no foreign key: a deleted lease's key is still a used key
    lease_id = sa.Column(sa.String(36), nullable=False)
    created_at = sa.Column(sa.DateTime, nullable=False, default=now)
    expires_at = sa.Column(sa.DateTime, nullable=False)


# -- webhooks -----------------------------------------------------------------

class LeaseSeries(TimestampMixin, Base):
    """A recurring lease (``climate.manager.series``): its rule, the body
    each occurrence is made from, and how far it has been booked."""

    __tablename__ = 'lease_series'
    __table_args__ = (
        sa.UniqueConstraint('project_id', 'name',
                            name='uniq_lease_series0project_id0name'),
        sa.Index('ix_lease_series_project', 'project_id', 'created_at'),
        # the series whose next occurrence the horizon reaches
        sa.Index('ix_lease_series_next', 'status', 'next_start'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    name = sa.Column(sa.String(255), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    # shared by its occurrences; deleted once the series is over
    trust_id = sa.Column(sa.String(255), nullable=True)
    # the rule from first_index on (an update replaces it from there)
    rrule = sa.Column(sa.String(255), nullable=False)
    timezone = sa.Column(sa.String(64), nullable=False)
    on_conflict = sa.Column(sa.String(8), nullable=False)
    first_index = sa.Column(sa.Integer, nullable=False)
    first_start = sa.Column(sa.DateTime, nullable=False)
    first_end = sa.Column(sa.DateTime, nullable=False)
    # the create body an occurrence is made from (its dates the first's)
    template = sa.Column(sa.JSON, nullable=False)
    # the next occurrence to make, and its start (null: none is left)
    next_index = sa.Column(sa.Integer, nullable=False)
    next_start = sa.Column(sa.DateTime, nullable=True)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    # the occurrences that could not be booked: [{occurrence, start_date,
    # end_date, reason}]
    skipped = sa.Column(sa.JSON, nullable=False)
    # written by every change: two managers changing the series conflict
    # on its row on any database (Galera's certification included)
    generation = sa.Column(sa.Integer, nullable=False, default=0)


class MaintenanceWindow(TimestampMixin, Base):
    """An operator's maintenance window on hosts
    (``climate.manager.maintenance``): what it took out, when, and what
    it did to the leases it hit; its hosts are booked by ``lease_id``, a
    lease of the operator's project."""

    __tablename__ = 'maintenance_windows'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_maintenance_windows0name'),
        sa.Index('ix_maintenance_windows_start', 'start_date'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    name = sa.Column(sa.String(255), nullable=False)
    reason = sa.Column(sa.Text, nullable=True)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    start_date = sa.Column(sa.DateTime, nullable=False)
    end_date = sa.Column(sa.DateTime, nullable=False)
    # the hosts taken out: [{id, name}]
    hosts = sa.Column(sa.JSON, nullable=False)
    # the lease booking them (null once the window is cancelled)
    lease_id = sa.Column(sa.String(36), nullable=True)
    # each lease it hit: [{lease_id, name, project_id, action, ...}]
    affected = sa.Column(sa.JSON, nullable=False)
    status = sa.Column(sa.String(16), nullable=False)


class IdlePolicy(TimestampMixin, Base):
    """A project's idle reclaim policy (``climate.manager.idle``)."""

    __tablename__ = 'idle_policies'

    project_id = sa.Column(sa.String(255), primary_key=True)
    # the resource types it covers (null: every type)
    resource_types = sa.Column(sa.JSON, nullable=True)
    # seconds of nothing used before the warning, and before the end
    # (0: never ended, warned only)
    warn_after = sa.Column(sa.Integer, nullable=False)
    end_after = sa.Column(sa.Integer, nullable=False)


class Webhook(Base):
    """An endpoint a project registered for its leases' notices
    (``climate.manager.webhooks``)."""

    __tablename__ = 'webhooks'
    __table_args__ = (
        # a project's webhooks, oldest first (the list, and the fan-out of
        # every notice of its leases)
        sa.Index('ix_webhooks_project', 'project_id', 'created_at'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    project_id = sa.Column(sa.String(255), nullable=False)
    url = sa.Column(sa.String(2048), nullable=False)
    # write-only: the API never shows it; bodies are signed with it
    secret = sa.Column(sa.String(255), nullable=False)
    # the event types delivered to it; null: all of them
    event_types = sa.Column(sa.JSON, nullable=True)
    created_at = sa.Column(sa.DateTime, nullable=False, default=now)


#: A delivery's body: a lease's view, which may outgrow TEXT on MariaDB.
DELIVERY_BODY = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')


class WebhookDelivery(Base):
    """One notice for one webhook: written with the event's DONE, then
    POSTed by the managers' delivery workers until it is delivered or
    gives up."""

    __tablename__ = 'webhook_deliveries'
    __table_args__ = (
        # an event's notice is recorded once per webhook, however often
        # the event's transaction is tried
        sa.UniqueConstraint('webhook_id', 'event_id',
                            name='uniq_webhook_deliveries0webhook0event'),
        # the claim: pending deliveries due first
        sa.Index('ix_webhook_deliveries_status_next', 'status',
                 'next_attempt_at'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    webhook_id = sa.Column(sa.String(36),
                           sa.ForeignKey('webhooks.id', ondelete='CASCADE'),
                           nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    # no foreign keys: the log outlives the lease and its events
    lease_id = sa.Column(sa.String(36), nullable=False)
    event_id = sa.Column(sa.String(36), nullable=False)
    event_type = sa.Column(sa.String(66), nullable=False)
    # the JSON text POSTed (and signed) on every attempt
    body = sa.Column(DELIVERY_BODY, nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    attempts = sa.Column(sa.Integer, nullable=False, default=0)
    # when a worker should next try it: a retry's time, or a claim's end
    next_attempt_at = sa.Column(sa.DateTime, nullable=False)
    last_status_code = sa.Column(sa.Integer, nullable=True)
    last_error = sa.Column(sa.Text, nullable=True)
    claimed_by = sa.Column(sa.String(255), nullable=True)
    claim_token = sa.Column(sa.String(36), nullable=True)
    created_at = sa.Column(sa.DateTime, nullable=False, default=now)
    delivered_at = sa.Column(sa.DateTime, nullable=True)


# -- physical:host ------------------------------------------------------------

#: Property values compare byte by byte on every engine (as the filter
#: language does in Python): MariaDB's default collation ignores case and
#: PostgreSQL's follows the locale.
CAPABILITY_VALUE = sa.String(255).with_variant(
    mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb'
).with_variant(postgresql.VARCHAR(255, collation='C'), 'postgresql')
#: The same for the text facts of hosts that filters compare.
FACT_TEXT = sa.Text().with_variant(
    mysql.TEXT(collation='utf8mb4_bin'), 'mysql', 'mariadb'
).with_variant(postgresql.TEXT(collation='C'), 'postgresql')


class ComputeHost(TimestampMixin, Base):
    """A reservable compute host and the facts its inventory reported.

    A host is also a provider of the capacity ledger (``provider_id`` its
    id as text, kind ``compute_host``): its reservations book there.
    """

    __tablename__ = 'computehosts'
    __table_args__ = (
        sa.UniqueConstraint('hypervisor_hostname',
                            name='uniq_computehosts0hypervisor_hostname'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    hypervisor_hostname = sa.Column(CAPABILITY_VALUE, nullable=False)
    service_name = sa.Column(CAPABILITY_VALUE, nullable=False)
    vcpus = sa.Column(sa.Integer, nullable=False, default=0)
    memory_mb = sa.Column(sa.Integer, nullable=False, default=0)
    local_gb = sa.Column(sa.Integer, nullable=False, default=0)
    cpu_info = sa.Column(FACT_TEXT, nullable=True)
    hypervisor_type = sa.Column(CAPABILITY_VALUE, nullable=True)
    hypervisor_version = sa.Column(sa.BigInteger, nullable=True)
    trust_id = sa.Column(sa.String(255), nullable=True)
    # False while the backend reports the host down: not offered to new
    # reservations, and healing moves its allocations elsewhere
    reservable = sa.Column(sa.Boolean, nullable=False, default=True)
    disabled = sa.Column(sa.Boolean, nullable=False, default=False)
    # what a static registration says of overcommit (null: 1.0); the
    # host's ledger inventory carries them (climate.db.ledger)
    cpu_allocation_ratio = sa.Column(sa.Float, nullable=True)
    ram_allocation_ratio = sa.Column(sa.Float, nullable=True)
    disk_allocation_ratio = sa.Column(sa.Float, nullable=True)


class VolumePool(TimestampMixin, Base):
    """A storage pool volume reservations book on (Cinder's
    ``host@backend#pool``, or declared to the static inventory).

    A pool is also a provider of the capacity ledger (``provider_id``
    ``volume_pool:<id>``, kind ``volume_pool``, classes ``VOLUME_GB`` and
    ``VOLUME``): see ``climate.db.volume_pools``.
    """

    __tablename__ = 'volume_pools'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_volume_pools0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    name = sa.Column(CAPABILITY_VALUE, nullable=False)
    backend = sa.Column(CAPABILITY_VALUE, nullable=False)
    reservable = sa.Column(sa.Boolean, nullable=False, default=True)
    total_capacity_gb = sa.Column(sa.BigInteger, nullable=False)
    reserved_percentage = sa.Column(sa.Integer, nullable=False, default=0)
    max_over_subscription_ratio = sa.Column(sa.Float, nullable=False,
                                            default=1.0)
    # JSON text: extra capabilities, storage_protocol, volume types...
    capabilities = sa.Column(sa.Text, nullable=False, default='{}')


class FloatingIP(TimestampMixin, Base):
    """An address of an external network that ``virtual:floatingip``
    reservations book (Blazar's ``floatingips``): registered by an
    operator, outside Neutron's allocation pools so that Neutron never
    hands it out on its own.

    An address is also a provider of the capacity ledger (``provider_id``
    ``floatingip:<id>``, kind ``floatingip``, class ``FLOATING_IP`` = 1):
    see ``climate.db.floatingips``.
    """

    __tablename__ = 'floatingips'
    __table_args__ = (
        # one registration per address of a network; finds a network's
        # addresses too
        sa.UniqueConstraint('floating_network_id', 'floating_ip_address',
                            name='uniq_floatingips0network0address'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    floating_network_id = sa.Column(CAPABILITY_VALUE, nullable=False)
    # the address in its canonical text (ipaddress' str)
    floating_ip_address = sa.Column(CAPABILITY_VALUE, nullable=False)
    # the Neutron subnet holding it (null with the static inventory)
    subnet_id = sa.Column(sa.String(255), nullable=True)
    reservable = sa.Column(sa.Boolean, nullable=False, default=True)


class NetworkSegment(TimestampMixin, Base):
    """A network segment ``network`` reservations book (Chameleon's and
    Blazar's ``network_segments``): a VLAN, VXLAN or flat segment an
    operator registered, made a Neutron network at a reservation's start.

    A segment is also a provider of the capacity ledger (``provider_id``
    ``network_segment:<id>``, kind ``network_segment``, class
    ``NETWORK_SEGMENT`` = 1): see ``climate.db.network_segments``.
    """

    __tablename__ = 'network_segments'
    __table_args__ = (
        # one registration per segment; physical_network is '' (not
        # null) for vxlan so that the constraint holds on every engine
        sa.UniqueConstraint('network_type', 'physical_network', 'segment_id',
                            name='uniq_network_segments0type0physnet0seg'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    network_type = sa.Column(sa.String(16), nullable=False)
    physical_network = sa.Column(CAPABILITY_VALUE, nullable=False,
                                 default='')
    segment_id = sa.Column(sa.Integer, nullable=False)
    reservable = sa.Column(sa.Boolean, nullable=False, default=True)
    # JSON text: the extra capabilities resource_properties select by
    capabilities = sa.Column(sa.Text, nullable=False, default='{}')


class ResourceProperty(TimestampMixin, Base):
    """A property name hosts may carry, and whether users may see it."""

    __tablename__ = 'resource_properties'
    __table_args__ = (
        sa.UniqueConstraint('resource_type', 'property_name',
                            name='uniq_resource_properties0type0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_type = sa.Column(sa.String(66), nullable=False)
    property_name = sa.Column(sa.String(255), nullable=False)
    private = sa.Column(sa.Boolean, nullable=False, default=False)


class HostCapability(Base):
    """One property value of one host (Blazar's extra capability).

    ``num_value`` holds the value when it reads as a number, so that the
    filter language compares numbers as numbers ("10" > "9") through an
    index.
    """

    __tablename__ = 'computehost_extra_capabilities'
    __table_args__ = (
        sa.UniqueConstraint('computehost_id', 'property_id',
                            name='uniq_host_capabilities0host0property'),
        # filter: hosts whose property P has a value =, <, > ... V
        sa.Index('ix_host_capabilities_property_value', 'property_id',
                 'capability_value', 'computehost_id'),
        sa.Index('ix_host_capabilities_property_num', 'property_id',
                 'num_value', 'computehost_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    computehost_id = sa.Column(
        sa.Integer, sa.ForeignKey('computehosts.id', ondelete='CASCADE'),
        nullable=False)
    property_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_properties.id'), nullable=False)
    capability_value = sa.Column(CAPABILITY_VALUE, nullable=False)
    num_value = sa.Column(sa.Float, nullable=True)


class HostInventoryVersion(Base):
    """One row counting changes to what host filters see (hosts, their
    capabilities, reservable): managers cache filter results per version.
    """

    __tablename__ = 'computehost_inventory_version'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    version = sa.Column(sa.BigInteger, nullable=False, default=0)


class InventoryVersion(Base):
    """The change counter of one kind of provider's inventory (volume
    pools, ...): managers cache what they compute from that inventory per
    version (``climate.db.inventory_versions``)."""

    __tablename__ = 'inventory_versions'

    kind = sa.Column(sa.String(64), primary_key=True, autoincrement=False)
    version = sa.Column(sa.BigInteger, nullable=False)


# -- capacity ledger (climate.db.ledger) --------------------------------------

#: Provider ids and resource classes compare and sort byte by byte on
#: every engine, as Python sorts them: the ledger locks in that order.
LEDGER_KEY = sa.String(255).with_variant(
    mysql.VARCHAR(255, collation='utf8mb4_bin'), 'mysql', 'mariadb'
).with_variant(postgresql.VARCHAR(255, collation='C'), 'postgresql')


#: The unique index of ledger inventories, by provider then class (the
#: ledger's locking reads name it).
LEDGER_INVENTORY_KEY = 'uniq_ledger_inventories0provider0class'


class LedgerInventory(TimestampMixin, Base):
    """How much of one resource class a provider has (Placement's
    inventory); its row is the lock a booking on it takes."""

    __tablename__ = 'ledger_inventories'
    __table_args__ = (
        sa.UniqueConstraint('provider_id', 'resource_class',
                            name=LEDGER_INVENTORY_KEY),
        # the search: providers of a kind in id order
        sa.Index('ix_ledger_inventories_kind_provider', 'provider_kind',
                 'provider_id', 'resource_class'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    provider_id = sa.Column(LEDGER_KEY, nullable=False)
    # compute_host, later volume_pool, external_network...
    provider_kind = sa.Column(sa.String(64), nullable=False)
    resource_class = sa.Column(LEDGER_KEY, nullable=False)
    total = sa.Column(sa.BigInteger, nullable=False)
    reserved = sa.Column(sa.BigInteger, nullable=False, default=0)
    allocation_ratio = sa.Column(sa.Double, nullable=False, default=1.0)
    min_unit = sa.Column(sa.BigInteger, nullable=False, default=1)
    max_unit = sa.Column(sa.BigInteger, nullable=False)
    step_size = sa.Column(sa.BigInteger, nullable=False, default=1)
    # bumped by every writer of the provider's capacity (a booking, a
    # release under rebook, an inventory change): two of them on
    # different Galera nodes write the same row, so certification fails
    # one (a row lock alone is local to its node; climate.db.ledger)
    generation = sa.Column(sa.BigInteger, nullable=False, default=0,
                           server_default='0')


class LedgerBooking(Base):
    """An amount of a provider's resource class held by a reservation
    over ``[start_date, end_date)``.

    ``span_level`` is the bit length of the window's length in seconds:
    a booking of level k started less than 2**k seconds before it ends,
    so the bookings overlapping a window are found by one bounded index
    range per level (``climate.db.ledger``), however long the others.
    """

    __tablename__ = 'ledger_bookings'
    __table_args__ = (
        # the search and the re-check under lock: a provider's bookings
        # over a window (covering)
        sa.Index('ix_ledger_bookings_provider_window', 'provider_id',
                 'resource_class', 'start_date', 'end_date', 'amount'),
        # the search: every booking over a window, by level (covering)
        sa.Index('ix_ledger_bookings_span_window', 'span_level',
                 'start_date', 'end_date', 'resource_class', 'provider_id',
                 'amount'),
        # physical:host (climate.db.hosts): a host's bookings of any class
        # from a time on, one range per host
        sa.Index('ix_ledger_bookings_provider_start', 'provider_id',
                 'start_date', 'end_date'),
        # physical:host: the bookings ending within a stretch of time
        sa.Index('ix_ledger_bookings_end', 'end_date', 'start_date',
                 'provider_id'),
        # quotas (climate.db.quotas): a project's bookings of a class
        # over a window, and their sums (covering)
        sa.Index('ix_ledger_bookings_project', 'project_id',
                 'resource_class', 'start_date', 'end_date', 'amount',
                 'lease_id'),
    )

    id = sa.Column(sa.String(36), primary_key=True, default=_uuid)
    reservation_id = sa.Column(
        sa.String(36), sa.ForeignKey('reservations.id', ondelete='CASCADE'),
        nullable=False, index=True)
    # no index: nothing looks bookings up by lease, and each index of
    # random keys costs every insert a page
    lease_id = sa.Column(sa.String(36), nullable=False)
    # the lease's project (climate.db.ledger writes it): what the
    # project's quotas weigh, without reading each of its leases
    project_id = sa.Column(sa.String(255), nullable=True)
    provider_id = sa.Column(LEDGER_KEY, nullable=False)
    resource_class = sa.Column(LEDGER_KEY, nullable=False)
    amount = sa.Column(sa.BigInteger, nullable=False)
    start_date = sa.Column(sa.DateTime, nullable=False)
    end_date = sa.Column(sa.DateTime, nullable=False)
    span_level = sa.Column(sa.SmallInteger, nullable=False)


class UsageRecord(Base):
    """What a reservation held before it was released for good: one
    ledger booking cut at the moment its lease ended or was deleted
    (``climate.db.usage``).  The ledger forgets released bookings; usage
    and billing read these, so a lease's consumption outlives it."""

    __tablename__ = 'usage_records'
    __table_args__ = (
        # a project's usage over a period
        sa.Index('ix_usage_records_project_window', 'project_id',
                 'end_date', 'start_date'),
        # the cloud-wide planning view over a period
        sa.Index('ix_usage_records_window', 'end_date', 'start_date'),
        # quotas: a project's consumption of a class within a budget
        # period (covering)
        sa.Index('ix_usage_records_project_class', 'project_id',
                 'resource_class', 'end_date', 'start_date', 'amount',
                 'lease_id'),
        # a lease's notifications: what it consumed
        sa.Index('ix_usage_records_lease', 'lease_id'),
    )

    id = sa.Column(sa.BigInteger().with_variant(sa.Integer, 'sqlite'),
                   primary_key=True, autoincrement=True)
    # no foreign keys: a record outlives its lease and reservation
    project_id = sa.Column(sa.String(255), nullable=False)
    lease_id = sa.Column(sa.String(36), nullable=False)
    lease_name = sa.Column(sa.String(255), nullable=False)
    # billing: how far ahead the lease was made
    lease_created_at = sa.Column(sa.DateTime, nullable=False)
    lease_start_date = sa.Column(sa.DateTime, nullable=False)
    reservation_id = sa.Column(sa.String(36), nullable=False)
    resource_type = sa.Column(sa.String(66), nullable=False)
    resource_class = sa.Column(LEDGER_KEY, nullable=False)
    amount = sa.Column(sa.BigInteger, nullable=False)
    start_date = sa.Column(sa.DateTime, nullable=False)
    end_date = sa.Column(sa.DateTime, nullable=False)


class ProjectQuota(TimestampMixin, Base):
    """A project's own limits (``climate.db.quotas``); a null column
    takes the configured default (``[quotas]``), -1 is no limit.

    Its row is also the lock two creates of the project take to check
    their concurrent and budget limits one after the other: a project
    without limits of its own gets a row of nulls the first time."""

    __tablename__ = 'project_quotas'

    project_id = sa.Column(sa.String(255), primary_key=True)
    max_lease_duration = sa.Column(sa.BigInteger, nullable=True)
    max_extension = sa.Column(sa.BigInteger, nullable=True)
    # {class: amount}
    max_concurrent = sa.Column(sa.JSON, nullable=True)
    # {class: resource-hours}
    budget = sa.Column(sa.JSON, nullable=True)
    budget_period = sa.Column(sa.String(16), nullable=True)
    # bumped by every quota check that reads what the project holds: the
    # write two checks of the project on different Galera nodes conflict
    # on (climate.db.quotas)
    generation = sa.Column(sa.BigInteger, nullable=False, default=0,
                           server_default='0')


class BillingRates(Base):
    """The operator's rate table (``climate.db.billing``): one row, its
    JSON as ``PUT /v1/billing/rates`` checked it."""

    __tablename__ = 'billing_rates'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    rates = sa.Column(sa.JSON, nullable=False)
    updated_at = sa.Column(sa.DateTime, nullable=False)


class WorkLock(Base):
    """A named job one manager at a time does (``lease_retries``: a pass
    over the waiting leases, ``climate.manager.workers.retries``;
    ``lease_hunts``) and who holds it until when
    (``climate.db.work_locks``)."""

    __tablename__ = 'work_locks'

    name = sa.Column(sa.String(64), primary_key=True)
    holder = sa.Column(sa.String(255), nullable=True)
    # the database's clock (UTC): past it, the holder is taken for dead
    held_until = sa.Column(sa.DateTime, nullable=True)


class HostPower(Base):
    """A host whose power Climate manages (``climate.db.power``): its
    power state as last read or acted on, since when, and what the
    power planner (``climate.manager.workers.power``) needs to act on it
    again after a failure or a crash."""

    __tablename__ = 'host_power'

    host_id = sa.Column(
        sa.Integer, sa.ForeignKey('computehosts.id', ondelete='CASCADE'),
        primary_key=True, autoincrement=False)
    # on / off / waking / unknown (climate.scheduling.power.STATES)
    state = sa.Column(sa.String(16), nullable=False)
    since = sa.Column(sa.DateTime, nullable=False)
    # the last wake's duration, from the power on to the host read on
    boot_seconds = sa.Column(sa.Integer, nullable=True)
    # while waking: the booking start the host must be up by (null: a
    # spare)
    need_at = sa.Column(sa.DateTime, nullable=True)
    last_error = sa.Column(sa.Text, nullable=True)
    error_at = sa.Column(sa.DateTime, nullable=True)
    # what the host drew free and idle, read from its switch just before
    # its last power off, and when (null: never read; the energy figures
    # count ``[power] idle_watts``)
    idle_watts = sa.Column(sa.Float, nullable=True)
    watts_at = sa.Column(sa.DateTime, nullable=True)


class HostPowerHistory(Base):
    """One interval a host spent in one power state: what the energy
    figures add up (``climate.scheduling.power.tally``).  No foreign key:
    the saving of a host outlives the host."""

    __tablename__ = 'host_power_history'
    __table_args__ = (
        # a host's history, and its open interval
        sa.Index('ix_host_power_history_host', 'host_id', 'started_at'),
        # the intervals over a period
        sa.Index('ix_host_power_history_window', 'ended_at', 'started_at'),
    )

    id = sa.Column(sa.BigInteger().with_variant(sa.Integer, 'sqlite'),
                   primary_key=True, autoincrement=True)
    host_id = sa.Column(sa.Integer, nullable=False)
    state = sa.Column(sa.String(16), nullable=False)
    started_at = sa.Column(sa.DateTime, nullable=False)
    # null: the host is in this state now
    ended_at = sa.Column(sa.DateTime, nullable=True)
