"""The request context: who asks, for which project, under which request id.

It also carries the database transaction (oslo.db enginefacade), so code
called with the same context joins the same transaction.
"""

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """oslo.context's context plus the lease trust of the caller."""

    def __init__(self, trust_id=None, **kwargs):
        super().__init__(**kwargs)
        self.trust_id = trust_id

    def to_dict(self):
        values = super().to_dict()
        values['trust_id'] = self.trust_id
        return values

    @classmethod
    def from_dict(cls, values, **kwargs):
        kwargs.setdefault('trust_id', values.get('trust_id'))
        kwargs.setdefault('is_admin', values.get('is_admin', False))
        return super().from_dict(values, **kwargs)

    def elevated(self):
        """A copy of this context with admin rights, for internal work."""
        ctx = self.from_dict(self.to_dict())
        ctx.is_admin = True
        if 'admin' not in ctx.roles:
            ctx.roles = list(ctx.roles) + ['admin']
        return ctx


def admin_context(request_id=None):
    """Context of Climate itself, used by the event engine."""
    return RequestContext(is_admin=True, roles=['admin'],
                          overwrite=False, request_id=request_id)
