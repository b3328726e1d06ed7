"""``/`` and ``/versions``: the version document (300, as Blazar)."""

import pecan

from climate.api import microversion
from climate.api.v1 import root as v1


def version_document(host_url):
    return {'versions': [{
        'id': 'v1.0',
        'status': 'CURRENT',
        'min_version': microversion.MIN,
        'max_version': microversion.MAX,
        'links': [{'href': '%s/v1/' % host_url.rstrip('/'),
                   'rel': 'self'}],
    }]}


class RootController:

    v1 = v1.V1Controller()

    @pecan.expose('json')
    def index(self):
        pecan.response.status = 300
        return version_document(pecan.request.application_url)

    @pecan.expose('json')
    def versions(self):
        return self.index()
