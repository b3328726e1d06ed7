"""A port another process holds stops climate-api and climate-all with
one line naming the address and the options, not a traceback."""

import socket

from oslo_config import cfg
import pytest

from climate.api import server
from climate import cmd
from climate.conf import api as api_conf


def _app(environ, start_response):  # pragma: no cover - never served
    start_response('204 No Content', [])
    return []


@pytest.fixture
def taken_port():
    holder = socket.socket()
    holder.bind(('127.0.0.1', 0))
    holder.listen(1)
    try:
        yield holder.getsockname()[1]
    finally:
        holder.close()


def test_a_taken_port_is_one_sentence(taken_port):
    with pytest.raises(server.CannotListen) as caught:
        server.APIServer(_app, '127.0.0.1', taken_port, 1)
    assert str(caught.value) == (
        'cannot listen on 127.0.0.1:%d: Address already in use; the '
        'address is [DEFAULT] host and port of the configuration' %
        taken_port)


def test_the_command_exits_with_it(taken_port):
    conf = cfg.ConfigOpts()
    api_conf.register_opts(conf)
    conf([], project='climate', default_config_files=[])
    conf.set_override('port', taken_port)
    with pytest.raises(SystemExit) as caught:
        cmd.listening(_app, conf)
    assert caught.value.code == (
        'climate: cannot listen on 127.0.0.1:%d: Address already in use; '
        'the address is [DEFAULT] host and port of the configuration' %
        taken_port)
