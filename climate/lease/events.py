"""The types of a lease's events: those Climate makes and those its event
engine runs.

A low module (it imports nothing of Climate): the lease rules
(``climate.lease.input``), the event engine
(``climate.manager.workers.events``) and the database's queries
(``climate.db.health``) all name them.
"""

START = 'start_lease'
END = 'end_lease'
BEFORE_END = 'before_end_lease'
#: The events Climate makes and its event engine runs.
EVENT_TYPES = (START, END, BEFORE_END)
#: A user's event that the engine runs too (once, at its time): a notice
#: sent as a notification and to the project's webhooks
#: (``climate.manager.webhooks``).  Other types a user gives are kept and
#: shown, never run.
NOTIFICATION = 'notification'
#: Every event type the engine claims and runs.
RUN_EVENT_TYPES = EVENT_TYPES + (NOTIFICATION,)
#: How the ``status_reason`` of a lease whose start waits for its
#: resources (hosts booting) begins, while it waits.
START_WAITS = 'start waits for '
