"""The one-line summaries of ``climate --help``.

cliff lists each command with the first line of its description (the
class docstring unless the command sets ``_description``): a docstring
whose first sentence runs on to a second line shows cut mid-sentence.
Every command of setup.cfg's ``climate.cli`` entry points must have a
first line that is a whole, short sentence, with a blank line (or nothing)
after it.
"""

import configparser
import importlib
import os

import pytest

from climate.cli import shell

SETUP_CFG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))), 'setup.cfg')
#: Longest summary: with the command's name it still fits a terminal line
#: for most names.
MAX_SUMMARY = 72


def _commands():
    """``(name, 'module:Class')`` of the ``climate.cli`` entry points."""
    parser = configparser.ConfigParser()
    parser.read(SETUP_CFG)
    lines = parser['entry_points'][shell.COMMAND_GROUP].strip().splitlines()
    return [tuple(part.strip() for part in line.split('=', 1))
            for line in lines]


def summary_problems(description):
    """What is wrong with a command description's first line, or None."""
    if not description.strip():
        return 'no description'
    first_paragraph = description.strip().split('\n\n', 1)[0]
    first_line = first_paragraph.split('\n', 1)[0]
    if first_paragraph != first_line:
        return 'its first sentence runs on to a second line: %r' % (
            first_paragraph,)
    if not first_line.endswith('.') or first_line.endswith('..'):
        return 'it does not end a sentence: %r' % first_line
    if not first_line[0].isupper():
        return 'it does not start a sentence: %r' % first_line
    if len(first_line) > MAX_SUMMARY:
        return 'it is longer than %d characters: %r' % (MAX_SUMMARY,
                                                       first_line)
    return None


@pytest.mark.parametrize('description, problem', [
    ('List leases.', None),
    ('List leases.\n\nAll pages unless --limit is given.', None),
    ('', 'no description'),
    ('Set some limits; -1 is no limit,\nthe rest stay.',
     'runs on to a second line'),
    ('Reserved capacity, step by step\n(administrators).',
     'runs on to a second line'),
    ('List leases', 'does not end a sentence'),
    ('List leases...', 'does not end a sentence'),
    ('list leases.', 'does not start a sentence'),
    ('List ' + 'leases and ' * 10 + 'hosts.', 'longer than'),
])
def test_the_check_finds_a_cut_summary(description, problem):
    found = summary_problems(description)
    if problem is None:
        assert found is None
    else:
        assert problem in found


def test_every_command_has_a_whole_sentence_as_summary():
    commands = _commands()
    assert len(commands) > 40, commands  # setup.cfg read, the group found
    app = shell.ClimateShell()
    problems = []
    for name, target in commands:
        module, cls = target.split(':')
        factory = getattr(importlib.import_module(module), cls)
        # as cliff's help builds the list: an instance's description
        problem = summary_problems(factory(app, None).get_description())
        if problem:
            problems.append('%s (%s): %s' % (name, target, problem))
    assert not problems, '\n'.join(problems)
