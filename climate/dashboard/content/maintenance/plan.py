"""A maintenance window's plan as the page shows it: each lease hit with
its options in words, and the choices of what to do with it."""

from django.utils.translation import gettext_lazy as _

from climate.dashboard import display

MOVE, SHORTEN, LEAVE = 'move', 'shorten', 'leave'
ACTIONS = (MOVE, SHORTEN, LEAVE)
ACTION_LABELS = {MOVE: _('Move it to another host'),
                 SHORTEN: _('End it when the window starts'),
                 LEAVE: _('Leave it its hosts')}
#: the field of a lease's action in the apply form
FIELD_PREFIX = 'action__'


def describe(action, option):
    """An option of the API's plan in words."""
    option = option or {}
    if action == MOVE:
        moves = option.get('hosts') or {}
        return _('Move: %s') % ', '.join(
            '%s → %s' % item for item in sorted(moves.items()))
    if action == SHORTEN:
        return _('Shorten: ends at %s') % display.short_date(
            option.get('end_date'))
    if action == LEAVE:
        return _('Leave: keeps %s (the window does not take it)') % \
            ', '.join(option.get('hosts') or [])
    return str(action)


def hits(window, chosen=None):
    """A dict per lease the plan hits: its name, project, status, dates,
    its options in words and the choices of its action (those it
    offers), ``chosen`` the action picked for it (by lease id)."""
    chosen = chosen or {}
    result = []
    for hit in window.affected or []:
        options = hit.get('options') or {}
        offered = [a for a in ACTIONS if a in options]
        result.append({
            'lease_id': hit.get('lease_id'), 'name': hit.get('name'),
            'project_id': hit.get('project_id'),
            'status': hit.get('status'),
            'start_text': display.short_date(hit.get('start_date')),
            'end_text': display.short_date(hit.get('end_date')),
            'field': FIELD_PREFIX + str(hit.get('lease_id')),
            'options': [{'action': a, 'text': describe(a, options[a]),
                         'label': ACTION_LABELS[a]} for a in offered],
            'chosen': chosen.get(hit.get('lease_id')) or '',
            'action': hit.get('action'), 'done': hit.get('done')})
    return result


def chosen_actions(post):
    """``{lease id: action}`` of the apply form's per-lease choices (an
    empty one: the default action)."""
    return {key[len(FIELD_PREFIX):]: value for key, value in post.items()
            if key.startswith(FIELD_PREFIX) and value in ACTIONS}
