"""A small Placement client on keystoneauth sessions, configured by ``[placement]``.

What Climate needs of Placement and nothing more: read a compute node's
resource provider and its inventories, keep child providers under it, a
custom resource class, one class's inventory on a provider, provider
aggregates (to find a reservation's providers again), and delete all that.

Every request carries the Placement microversion :data:`MICROVERSION`
(``OpenStack-API-Version: placement 1.26``), the one this code is written
against: 1.14 nested providers (``parent_provider_uuid``, ``in_tree``),
1.19 provider aggregates with generations, 1.20 a created provider in the
answer, 1.23 error codes, 1.26 ``reserved`` equal to ``total`` (an
inventory closed to new allocations).  Placement accepts any microversion
up to its own maximum, so a newer Placement changes nothing here.

Writes to a provider carry its generation; a concurrent writer (nova-compute
refreshing the compute node, another manager) makes Placement answer 409
``placement.concurrent_update``, and the write is redone on the fresh
generation a bounded number of times.  Errors are raised as
:class:`PlacementError` (``NotFound`` and ``Conflict`` for the answers a
caller may expect), transport failures included.
"""

import time

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc

from climate.clients import get_conf
from climate.clients import keystone

#: The Placement microversion every call sends.
MICROVERSION = '1.26'
#: Writes redone after a generation conflict, at most.
GENERATION_RETRIES = 10
#: First pause after a generation conflict (seconds, doubling, capped).
RETRY_PAUSE = 0.05
RETRY_PAUSE_MAX = 1.0

CONCURRENT_UPDATE = 'placement.concurrent_update'
DUPLICATE_NAME = 'placement.duplicate_name'
INVENTORY_IN_USE = 'placement.inventory.inuse'


class PlacementError(Exception):
    """Placement refused or failed a call (``status`` None: no answer)."""

    def __init__(self, doing, status=None, code=None, detail=None):
        self.doing = doing
        self.status = status
        self.code = code
        self.detail = detail
        what = 'HTTP %s' % status if status is not None else 'no answer'
        if code and code != 'placement.undefined_code':
            what += ' %s' % code
        super().__init__('%s: %s%s' % (doing, what,
                                       ': %s' % detail if detail else ''))


class NotFound(PlacementError):
    """404: the provider, inventory or class is not there."""


class Conflict(PlacementError):
    """409 other than a generation conflict: in use, name taken, ..."""


class GenerationConflict(Conflict):
    """The generation kept changing under a write, retries exhausted."""


def _error(resp, doing):
    """A PlacementError for the non-2xx answer ``resp``."""
    code = detail = None
    try:
        errors = resp.json().get('errors') or []
    except ValueError:
        errors = []
    if errors:
        code = errors[0].get('code')
        detail = (errors[0].get('detail') or errors[0].get('title') or '')
        # Placement's details repeat the status line first
        detail = detail.split('\n\n', 1)[-1].strip() or None
    elif resp.text:
        detail = resp.text.strip()[:300]
    cls = PlacementError
    if resp.status_code == 404:
        cls = NotFound
    elif resp.status_code == 409:
        cls = Conflict
        if code == CONCURRENT_UPDATE:
            if 'in use' in (detail or ''):
                # Placement answers an inventory with allocations this way
                # too; no retry changes that
                code = INVENTORY_IN_USE
            else:
                cls = GenerationConflict
    return cls(doing, resp.status_code, code, detail)


class PlacementClient:
    """Placement through one keystoneauth session (see module)."""

    def __init__(self, sess, conf=None):
        conf = get_conf(conf)
        opts = conf.placement
        self.api = adapter.Adapter(
            sess, service_type='placement', interface=opts.interface,
            region_name=opts.region_name,
            endpoint_override=opts.endpoint_override,
            connect_retries=opts.connect_retries,
            default_microversion=MICROVERSION)

    # -- plumbing ----------------------------------------------------------

    def _call(self, method, url, doing, ok=(200,), **kwargs):
        """One request; the answer when its status is in ``ok``, else the
        matching PlacementError."""
        headers = kwargs.pop('headers', {})
        headers.setdefault('Accept', 'application/json')
        try:
            resp = self.api.request(url, method, raise_exc=False,
                                    headers=headers, **kwargs)
        except ks_exc.ClientException as exc:
            raise PlacementError(doing, detail=str(exc) or
                                 type(exc).__name__) from exc
        if resp.status_code in ok:
            return resp
        raise _error(resp, doing)

    @staticmethod
    def _retrying(doing, attempt):
        """``attempt()`` again while Placement answers a generation
        conflict (``attempt`` reads the generation afresh each time)."""
        pause = RETRY_PAUSE
        for tries in range(GENERATION_RETRIES):
            try:
                return attempt()
            except GenerationConflict as exc:
                last = exc
            time.sleep(pause)
            pause = min(pause * 2, RETRY_PAUSE_MAX)
        raise GenerationConflict(
            doing, 409, CONCURRENT_UPDATE,
            'the provider changed under %d attempts (%s)' % (
                GENERATION_RETRIES, last.detail))

    # -- providers ---------------------------------------------------------

    def provider(self, uuid):
        """The provider ``uuid`` (dict: uuid, name, generation,
        parent_provider_uuid, root_provider_uuid), None when absent."""
        try:
            return self._call('GET', '/resource_providers/%s' % uuid,
                              'reading resource provider %s' % uuid).json()
        except NotFound:
            return None

    def providers(self, **filters):
        """Providers matching Placement's query ``filters`` (``name``,
        ``in_tree``, ``member_of``, ``uuid``, ...)."""
        return self._call('GET', '/resource_providers',
                          'listing resource providers %s' % filters,
                          params=filters).json()['resource_providers']

    def provider_by_name(self, name):
        """The provider named ``name``, None when there is none."""
        found = self.providers(name=name)
        return found[0] if found else None

    def create_provider(self, name, parent_uuid=None):
        """Create a provider (a child of ``parent_uuid`` when given); a
        name already taken raises Conflict."""
        body = {'name': name}
        if parent_uuid is not None:
            body['parent_provider_uuid'] = parent_uuid
        return self._call('POST', '/resource_providers',
                          'creating resource provider %s' % name, ok=(200,),
                          json=body).json()

    def ensure_child(self, parent_uuid, name):
        """The provider ``name`` under ``parent_uuid``, created when
        missing; a concurrent creator is tolerated.  A provider of that name
        elsewhere in Placement raises Conflict."""
        doing = 'creating resource provider %s under %s' % (name, parent_uuid)
        for _attempt in range(3):
            found = self.provider_by_name(name)
            if found is not None:
                if found.get('parent_provider_uuid') != parent_uuid:
                    raise Conflict(doing, 409, DUPLICATE_NAME,
                                   'a provider %s exists under %s' % (
                                       name, found.get('parent_provider_uuid')
                                       or 'no parent'))
                return found
            try:
                return self.create_provider(name, parent_uuid)
            except Conflict:
                pass  # someone made it meanwhile: read it
        raise Conflict(doing, 409, DUPLICATE_NAME,
                       'created and gone again three times')

    def delete_provider(self, uuid):
        """Delete the provider; already gone is fine.  One still holding
        allocations or children raises Conflict."""
        try:
            self._call('DELETE', '/resource_providers/%s' % uuid,
                       'deleting resource provider %s' % uuid, ok=(204,))
        except NotFound:
            pass

    # -- inventories -------------------------------------------------------

    def inventories(self, uuid):
        """``(generation, {resource class: inventory dict})`` of the
        provider; NotFound when it is gone."""
        body = self._call('GET', '/resource_providers/%s/inventories' % uuid,
                          'reading inventories of %s' % uuid).json()
        return body['resource_provider_generation'], body['inventories']

    def usages(self, uuid):
        """``{resource class: amount allocated}`` on the provider (classes
        without allocations may be absent or 0); NotFound when it is
        gone."""
        return self._call('GET', '/resource_providers/%s/usages' % uuid,
                          'reading usages of %s' % uuid).json()['usages']

    def set_inventory(self, uuid, resource_class, total, reserved=0,
                      min_unit=1, max_unit=None, step_size=1,
                      allocation_ratio=1.0):
        """Make the provider's inventory of ``resource_class`` exactly this
        (written only when it differs; generation conflicts retried).

        :returns: the inventory as Placement now has it.
        """
        wanted = {'total': total, 'reserved': reserved, 'min_unit': min_unit,
                  'max_unit': total if max_unit is None else max_unit,
                  'step_size': step_size,
                  'allocation_ratio': float(allocation_ratio)}
        doing = 'setting inventory %s of %s' % (resource_class, uuid)

        def attempt():
            generation, current = self.inventories(uuid)
            have = current.get(resource_class)
            if have is not None and all(
                    have.get(k) == v for k, v in wanted.items()):
                return have
            body = dict(wanted, resource_provider_generation=generation)
            if have is not None:
                return self._call(
                    'PUT', '/resource_providers/%s/inventories/%s' % (
                        uuid, resource_class), doing, json=body).json()
            # PUT of one class only updates: a new class is POSTed
            body['resource_class'] = resource_class
            return self._call('POST', '/resource_providers/%s/inventories'
                              % uuid, doing, ok=(201,), json=body).json()
        return self._retrying(doing, attempt)

    def remove_inventory(self, uuid, resource_class):
        """Remove one class's inventory from the provider; an inventory or
        provider already gone is fine.  Allocations against it raise
        Conflict (``placement.inventory.inuse``)."""
        doing = 'removing inventory %s of %s' % (resource_class, uuid)

        def attempt():
            try:
                _generation, current = self.inventories(uuid)
            except NotFound:
                return
            if resource_class not in current:
                return
            try:
                self._call('DELETE', '/resource_providers/%s/inventories/%s'
                           % (uuid, resource_class), doing, ok=(204,))
            except NotFound:
                pass
        self._retrying(doing, attempt)

    def allocations(self, uuid):
        """``{consumer uuid: {'resources': {class: amount}}}`` on the
        provider; empty when it is gone."""
        try:
            return self._call(
                'GET', '/resource_providers/%s/allocations' % uuid,
                'reading allocations on %s' % uuid).json()['allocations']
        except NotFound:
            return {}

    # -- provider aggregates -----------------------------------------------

    def aggregates(self, uuid):
        """``(generation, [aggregate uuids])`` of the provider."""
        body = self._call('GET', '/resource_providers/%s/aggregates' % uuid,
                          'reading aggregates of %s' % uuid).json()
        return body['resource_provider_generation'], body['aggregates']

    def add_to_aggregate(self, uuid, aggregate):
        """Put the provider in the Placement aggregate ``aggregate`` (a
        uuid), keeping its other aggregates; generation conflicts retried."""
        doing = 'adding %s to placement aggregate %s' % (uuid, aggregate)

        def attempt():
            generation, current = self.aggregates(uuid)
            if aggregate in current:
                return
            self._call('PUT', '/resource_providers/%s/aggregates' % uuid,
                       doing, json={
                           'aggregates': sorted(set(current) | {aggregate}),
                           'resource_provider_generation': generation})
        self._retrying(doing, attempt)

    def remove_from_aggregate(self, uuid, aggregate):
        """Take the provider out of the Placement aggregate ``aggregate``;
        not in it, or no provider, is fine."""
        doing = 'removing %s from placement aggregate %s' % (uuid, aggregate)

        def attempt():
            try:
                generation, current = self.aggregates(uuid)
            except NotFound:
                return
            if aggregate not in current:
                return
            self._call('PUT', '/resource_providers/%s/aggregates' % uuid,
                       doing, json={
                           'aggregates': sorted(set(current) - {aggregate}),
                           'resource_provider_generation': generation})
        self._retrying(doing, attempt)

    # -- resource classes --------------------------------------------------

    def ensure_resource_class(self, name):
        """Create the custom resource class ``name`` (``CUSTOM_...``);
        existing already is fine."""
        self._call('PUT', '/resource_classes/%s' % name,
                   'creating resource class %s' % name, ok=(201, 204))

    def resource_class_exists(self, name):
        try:
            self._call('GET', '/resource_classes/%s' % name,
                       'reading resource class %s' % name)
        except NotFound:
            return False
        return True

    def delete_resource_class(self, name):
        """Delete the custom class; already gone is fine.  An inventory of
        it anywhere raises Conflict."""
        try:
            self._call('DELETE', '/resource_classes/%s' % name,
                       'deleting resource class %s' % name, ok=(204,))
        except NotFound:
            pass


def client(sess, conf=None):
    """A :class:`PlacementClient` on the keystoneauth session ``sess``."""
    return PlacementClient(sess, conf)


def service_client(conf=None):
    """Placement as Climate's service user (admin: Placement's API is)."""
    return client(keystone.service_session(conf), conf)
