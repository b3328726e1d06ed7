"""API microversions: ``OpenStack-API-Version: reservation X.Y``.

History (also in doc/source/api-microversions.rst):

* 1.0 - Blazar's v1 API.
* 1.1 - ``GET /v1/leases``: pagination (``limit``, ``marker``, ``sort_key``,
  ``sort_dir``, ``leases_links``) and filters (``status``, ``name``,
  ``project_id`` for admins, ``time_from``/``time_to``).
* 1.2 - ``POST /v1/os-hosts/availability`` (earliest windows where N
  matching hosts are free) and ``POST /v1/os-hosts/timeline`` (free
  matching hosts over a range).
* 1.3 - ``POST /v1/instances/availability`` (earliest windows where N
  instance slots of a shape fit).
* 1.4 - pre-created ``virtual:instance`` reservations: ``server_id`` or
  ``server`` (a boot request), ``on_end``.
* 1.5 - ``/v1/volume-pools`` (the volume pools ``virtual:volume``
  reservations book on: list, show, create, update, delete).
* 1.6 - ``POST /v1/volumes/availability`` (earliest windows where a
  volume reservation fits, with the gigabytes free) and ``GET
  /v1/volume-pools/allocations`` (the reservations holding each pool).
* 1.7 - ``/v1/webhooks`` (a project's endpoints for its leases' notices:
  list, show, create, delete; the secret is write-only) and ``GET
  /v1/webhooks/{id}/deliveries`` (the delivery log).
* 1.8 - ``GET /v1/usage`` (a project's reserved resource-hours over a
  period: consumed, committed, held now; per lease) and ``GET
  /v1/usage/capacity`` (reserved against reservable capacity by class,
  step by step; administrators).
* 1.9 - ``/v1/quotas/{project_id}`` (GET, PUT, DELETE: a project's limits
  on leases, checked at every create and update).
* 1.10 - ``GET /v1/billing`` (the bill of a period, JSON or CSV) and
  ``GET|PUT /v1/billing/rates`` (the operator's rate table).
* 1.11 - lease types: ``lease_type`` (``immediate``, ``with_retries``,
  ``best_effort``, ``scheduled``) and ``max_retries`` in a create; the
  states ``INACTIVE``, ``WAITING``, ``EXHAUSTED``, ``IN_PROGRESS`` and
  ``TIMEDOUT`` (shown to older clients as Blazar's ``PENDING``,
  ``STARTING`` or ``ERROR``).
* 1.12 - ``GET /v1/os-hosts/power`` (each host's power state as the power
  planner keeps it), ``GET /v1/os-hosts/{id}/power`` (one host's state,
  its history over a period and the energy its power-offs saved) and
  ``GET /v1/usage/energy`` (what powering hosts off saved over a period,
  step by step and per host).
* 1.13 - the hosts' measured idle draw: a host's power state gains
  ``idle_watts`` and ``watts_at`` (what its switch read just before its
  last power off, and when; null when never read), its energy figures
  ``watts_source``, and each host of ``GET /v1/usage/energy`` the
  ``idle_watts`` counted and ``watts_source`` (``measured`` or
  ``configured``: ``[power] idle_watts``).
* 1.14 - temporary holds: ``hold_for`` in a create (the lease ``HELD``
  until its ``hold_expires_at``), ``POST /v1/leases/{id}/confirm``, and
  the states ``HELD`` and ``EXPIRED`` (shown to older clients as
  ``PENDING`` and ``TERMINATED``).
* 1.15 - recurring leases: ``/v1/lease-series`` (GET, POST; GET, PUT,
  DELETE of one: a series' rule, its occurrences booked as leases up to
  a horizon, an update from an occurrence on, a cancel), and each
  lease's ``series_id`` and ``occurrence``.
* 1.16 - maintenance windows: ``/v1/maintenance-windows`` (GET, POST with
  ``dry_run`` for the plan; GET, DELETE of one), administrators'.
* 1.17 - idle reclaim: ``/v1/idle-policies`` (GET; GET, PUT, DELETE of a
  project's), ``keep_idle`` in a lease create, and each lease's
  ``keep_idle``, ``last_used_at``, ``idle_warned_at`` and
  ``idle_ended_at``.
"""

import re

import microversion_parse

from climate import exceptions

SERVICE_TYPE = 'reservation'
HEADER = 'OpenStack-API-Version'
ENVIRON_KEY = 'climate.microversion'

VERSIONS = ('1.0', '1.1', '1.2', '1.3', '1.4', '1.5', '1.6', '1.7', '1.8',
            '1.9', '1.10', '1.11', '1.12', '1.13',
            '1.14', '1.15', '1.16', '1.17')
MIN = VERSIONS[0]
MAX = VERSIONS[-1]

_FORMAT = re.compile(r'^(0|[1-9]\d*)\.(0|[1-9]\d*)$')


class Version(tuple):
    """A comparable (major, minor) pair."""

    @classmethod
    def parse(cls, text):
        match = _FORMAT.match(text or '')
        if not match:
            raise ValueError(text)
        return cls((int(match.group(1)), int(match.group(2))))

    def __str__(self):
        return '%d.%d' % self


MIN_VERSION = Version.parse(MIN)
MAX_VERSION = Version.parse(MAX)


def from_headers(headers):
    """The version a request asks for.

    :raises ValueError: malformed header (400).
    :raises LookupError: well-formed but not served (406).
    """
    try:
        text = microversion_parse.get_version(headers,
                                              service_type=SERVICE_TYPE)
    except ValueError:
        raise ValueError(headers.get(HEADER))
    if text is None:
        return MIN_VERSION
    if text.strip() == 'latest':
        return MAX_VERSION
    version = Version.parse(text.strip())
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise LookupError(str(version))
    return version


def of(request):
    """The version already negotiated for a (webob/pecan) request."""
    return request.environ.get(ENVIRON_KEY, MIN_VERSION)


def require(request, version):
    """Refuse (404) a route that a request's microversion does not serve.

    ``version`` is the first microversion with the route, as text
    (``'1.2'``) or a :class:`Version`; ``request`` is the (webob/pecan)
    request.  The sentence names the path and the header to send.

    :raises climate.exceptions.NotFound: the request asks for less.
    """
    if not isinstance(version, Version):
        version = Version.parse(version)
    if of(request) < version:
        raise exceptions.NotFound(
            message='%s needs microversion %s or later (send '
                    '"OpenStack-API-Version: %s %s").' % (
                        request.path, version, SERVICE_TYPE, version))
