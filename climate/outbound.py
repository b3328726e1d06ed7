"""HTTP requests Climate sends to services outside OpenStack (a
project's webhooks, the operator's approval service).

A redirect is an answer, not a new target: following it would reach an
address nobody checked (a webhook's URL is checked against loopback and
link-local targets; the approval service is the one configured)."""

import urllib.request


class _NoRedirect(urllib.request.HTTPRedirectHandler):

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


#: ``OPENER.open(request, timeout=...)``: a 3xx raises ``HTTPError``.
OPENER = urllib.request.build_opener(_NoRedirect)
