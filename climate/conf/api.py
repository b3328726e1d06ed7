from oslo_config import cfg

AUTH_KEYSTONE = 'keystone'
AUTH_NOAUTH = 'noauth'

default_opts = [
    cfg.HostAddressOpt('host', default='127.0.0.1',
                       help='Address climate-api listens on.'),
    cfg.PortOpt('port', default=1234, help='Port climate-api listens on.'),
    cfg.StrOpt('auth_strategy', default=AUTH_KEYSTONE,
               choices=[(AUTH_KEYSTONE, 'keystonemiddleware auth_token'),
                        (AUTH_NOAUTH, 'trust X-Project-Id/X-User-Id/X-Roles '
                                      'headers; for a single trusted user on '
                                      'loopback only')],
               help='How the API authenticates requests.'),
]

api_opts = [
    cfg.IntOpt('threads', default=8, min=1,
               help='Worker threads of the climate-api WSGI server.'),
    cfg.IntOpt('backlog', default=4096, min=16,
               help='Connections the climate-api / climate-all server lets '
                    'the kernel queue before it accepts them (the listen '
                    'backlog, capped by net.core.somaxconn).  A short queue '
                    'overflows when many clients connect at once: Linux '
                    'then answers with SYN cookies, drops the completed '
                    'connections it has no room for, and the clients\' '
                    'requests get "connection reset by peer".'),
    cfg.IntOpt('max_limit', default=1000, min=1,
               help='Largest page a list request may ask for.'),
    cfg.IntOpt('default_limit', default=1000, min=1,
               help='Page size when a paginated list gives no limit.'),
    cfg.IntOpt('max_name_length', default=80, min=1, max=255,
               help='Longest lease name accepted.'),
    cfg.IntOpt('max_request_body_size', default=1024 * 1024, min=1024,
               help='Largest request body accepted, in bytes, however it is '
                    'sent (with Content-Length or chunked): the API reads at '
                    'most one byte more and answers 413 Request Entity Too '
                    'Large, as oslo.middleware\'s sizelimit does.'),
    cfg.IntOpt('max_request_header_size', default=64 * 1024, min=1024,
               help='Largest request line (method and URL) plus headers '
                    'accepted by the climate-api / climate-all server, in '
                    'bytes; beyond it the server answers 414 Request-URI '
                    'Too Long (request line) or 413 (headers) and closes the '
                    'connection.  Under another WSGI server '
                    '(climate.wsgi.api) that server\'s own limits apply.'),
]

noauth_opts = [
    cfg.StrOpt('project_id', default='embedded',
               help='Project of requests without X-Project-Id (noauth).'),
    cfg.StrOpt('user_id', default='embedded',
               help='User of requests without X-User-Id (noauth).'),
    cfg.ListOpt('roles', default=['admin', 'member', 'reader'],
                help='Roles of requests without X-Roles (noauth).'),
    cfg.BoolOpt('allow_remote', default=False,
                help='Serve auth_strategy = noauth on an address that is not '
                     'loopback, or as a WSGI application (whose listening '
                     'address Climate cannot see).  noauth believes the '
                     'identity headers: anyone who reaches the API can act '
                     'as any project, admin included.  Without this option '
                     'climate-api and climate-all refuse to start there and '
                     'the WSGI application refuses every request.'),
]


def register_opts(conf):
    conf.register_opts(default_opts)
    conf.register_opts(api_opts, group='api')
    conf.register_opts(noauth_opts, group='noauth')


def list_opts():
    return [('DEFAULT', default_opts), ('api', api_opts),
            ('noauth', noauth_opts)]
