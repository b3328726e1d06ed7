"""What a ``virtual:stack`` backend does (``[stacks] inventory``).

The plugin derives what a template needs and the lease books it as
reservations of other types (``climate.plugins.virtual_stack.needs``); a
backend knows the flavors templates may name and makes, ends and shows
the stack.  Every action is idempotent: an event that runs again finds
the stack it made (by its name and the reservation's tag) and finishes
the job rather than doing it twice.
"""

import abc

#: What a backend's actions answer, stored on the reservation and shown:
#: ``servers`` (a woken stack's: ``server_id``, ``resource``, ``status``,
#: ``error``), ``images`` (``on_end: snapshot``'s: ``server_id``,
#: ``resource``, ``image_id``).  ``snapshot_id`` (a Heat snapshot, which
#: Heat deleted with the stack) is no longer set; older reservations show
#: it, and a client may send it back.
OUTPUT_FIELDS = ('stack_id', 'stack_status', 'stack_status_reason',
                 'outputs', 'snapshot_id', 'servers', 'images')

#: A started stack's update committed and not yet sent to Heat (Climate's
#: own ``stack_status``: the next step, after the commit or by the
#: periodic pass, sends it).
UPDATE_ASKED = 'UPDATE_ASKED'


class StackBackend(abc.ABC):
    #: The ``[stacks] inventory`` value it serves.
    name = None
    #: Whether start/end call a cloud service (see ``ResourcePlugin``).
    acts_in_cloud = True

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def flavors(self):
        """The flavors a template's servers may name: ``{name: {'id',
        'vcpus', 'ram' (MB), 'disk' (GB, ephemeral included)}}`` (each
        also reachable by its id, see ``needs.derive``)."""

    def validate(self, template, parameters, environment, user_session):
        """Check the template as the cloud would, as the user (Heat's
        template validation).  Default: nothing more than the derivation.

        :param user_session: a callable returning the user's session.
        :raises climate.exceptions.InvalidInput: with the cloud's reason.
        """

    @abc.abstractmethod
    def start(self, reservation, project_id, parts, user_session):
        """Make the stack at the start (``on_start: create``) or wake the
        one made at the create (``wake``), pinned to what ``parts`` (the
        views of the reservations holding its needs, started already;
        an instance part of a ``wake`` stack with its ``hosts``, ``[(host
        facts, slots)]``) hold.

        :returns: a dict of :data:`OUTPUT_FIELDS`.
        """

    @abc.abstractmethod
    def update(self, reservation, project_id, parts, user_session):
        """A started stack's update, one step (called after the lease
        update's commit and by each periodic pass while the reservation's
        ``stack_status`` is the plugin's ``UPDATE_ASKED`` or an update in
        progress, under the lease's lock: must not wait long).  Asked:
        send the reservation's template, parameters and environment,
        pinned to ``parts`` as the start pins them; in progress: follow
        it; done: answer Heat's status, its reason when it failed, and the
        outputs.

        :returns: a dict of :data:`OUTPUT_FIELDS` (or of some of them).
        """

    def hold(self, reservation, project_id, parts, user_session):
        """``on_start: wake``: make the stack after the create and keep
        its servers shelved until the start; called again by each
        periodic pass until the start, so one call may do one step and
        must not wait long.  Default: nothing (the start makes it).

        :returns: a dict of :data:`OUTPUT_FIELDS` (or of some of them).
        """
        return {}

    def discard(self, reservation, project_id):
        """Delete what :meth:`hold` made for a reservation whose lease is
        deleted before its start, without waiting (it runs in the
        delete's transaction).  Default: nothing."""

    @abc.abstractmethod
    def end(self, reservation, project_id, action):
        """Apply the reservation's ``on_end`` ``action`` (``delete``,
        ``suspend``, ``snapshot`` then delete) to its stack in the lease's
        project ``project_id``, with the service's credentials (never the
        trust).

        :returns: a dict of :data:`OUTPUT_FIELDS`.
        """
