# Sphinx configuration of Climate's API reference (``tox -e api-ref``).
#
# The OpenStack API reference layout: os-api-ref's directives
# (``rest_method``, ``rest_parameters``, ``rest_status_code``) over
# parameters.yaml and status.yaml, with samples captured from the running
# API (samples/, written by tools/api-ref-samples.py and checked by
# climate/tests/unit/test_api_ref.py).

import ast
import os

project = 'Climate API Reference'
copyright = 'Climate contributors'
master_doc = 'index'
extensions = ['os_api_ref', 'openstackdocstheme']
html_theme = 'openstackdocs'
html_theme_options = {'sidebar_mode': 'toc'}
# Climate's issues are not on Launchpad or StoryBoard: no bug link, no
# link to a source repository the theme would guess.
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
html_static_path = []


def _versions():
    """VERSIONS of climate/api/microversion.py, the range the pages'
    version selector offers: read from the code, not copied, and without
    importing it (the docs build installs none of Climate's
    dependencies)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                        '..', 'climate', 'api', 'microversion.py')
    with open(path, encoding='utf-8') as source:
        tree = ast.parse(source.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and \
                getattr(node.targets[0], 'id', None) == 'VERSIONS':
            return ast.literal_eval(node.value)
    raise RuntimeError('no VERSIONS in %s' % path)


_VERSIONS = _versions()
os_api_ref_min_microversion = _VERSIONS[0]
os_api_ref_max_microversion = _VERSIONS[-1]
