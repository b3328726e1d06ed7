from oslo_config import cfg

path_opts = [
    cfg.StrOpt('state_path',
               default='$pybasedir',
               help='Directory where Climate keeps its state, such as the '
                    'embedded SQLite database.'),
]

# Not shown in the sample file: computed from the installed package.
hidden_opts = [
    cfg.StrOpt('pybasedir',
               default='.',
               sample_default='<current directory>',
               help='Base directory for relative state paths.'),
]


def register_opts(conf):
    conf.register_opts(path_opts + hidden_opts)


def list_opts():
    return [('DEFAULT', path_opts)]
