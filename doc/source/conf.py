# Sphinx configuration of Climate's documentation (``tox -e docs``).

project = 'Climate'
copyright = 'Climate contributors'
master_doc = 'index'
exclude_patterns = []
# every page is in the index's table of contents (or says why not)
html_theme = 'alabaster'
html_static_path = []
