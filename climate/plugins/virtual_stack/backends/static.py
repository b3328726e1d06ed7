"""The static stack backend: records, acts nowhere.

With ``[stacks] inventory = static`` (the embedded default) a template's
needs are derived against the flavors of ``[stacks] static_flavors`` and
booked like any reservation; the start and the end change nothing in a
cloud, they only record what Heat would say.
"""

import uuid

from climate import exceptions
from climate.plugins.virtual_stack.backends import base

#: The namespace of the stack ids this backend records (one per
#: reservation, the same on every run).
_IDS = uuid.UUID('4f7d5a52-93c1-4f4b-8a0c-3c1b8a3a9d35')


def parse_flavors(entries):
    """``[stacks] static_flavors`` as ``needs.derive`` reads flavors."""
    flavors = {}
    for entry in entries:
        try:
            name, vcpus, ram, disk = entry.split(':')
            flavors[name] = {'id': name, 'vcpus': int(vcpus),
                             'ram': int(ram), 'disk': int(disk)}
        except ValueError:
            raise exceptions.InvalidInput(
                reason='[stacks] static_flavors entry %r is not '
                       'name:vcpus:memory_mb:disk_gb' % (entry,))
    return flavors


class StaticStackBackend(base.StackBackend):
    name = 'static'
    acts_in_cloud = False

    def flavors(self):
        return parse_flavors(self.conf.stacks.static_flavors)

    def start(self, reservation, project_id, parts, user_session):
        return {'stack_id': str(uuid.uuid5(_IDS, reservation['id'])),
                'stack_status': 'CREATE_COMPLETE',
                'stack_status_reason': None, 'outputs': []}

    def update(self, reservation, project_id, parts, user_session):
        return {'stack_status': 'UPDATE_COMPLETE',
                'stack_status_reason': None}

    def end(self, reservation, project_id, action):
        status = {'suspend': 'SUSPEND_COMPLETE'}.get(action,
                                                     'DELETE_COMPLETE')
        return {'stack_status': status, 'stack_status_reason': None,
                'snapshot_id': None}
