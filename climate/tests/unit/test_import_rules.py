"""The import rules of doc/source/architecture.rst ("Which layer imports
which"), read from the source: no import cycle, no layer importing one
above it, no module using another module's ``_private`` names.

Only ``climate`` itself is read, not its tests (a test may use what the
code it tests keeps private).
"""

import ast
import collections
import os

import climate

ROOT = os.path.dirname(os.path.abspath(climate.__file__))
#: What the lower layers may import from ``climate.manager``: its RPC
#: client.
MANAGER_FOR_LOWER = {
    'climate.manager.rpcapi',
}


def _modules():
    """``{module name: path}`` of every module of climate but its tests."""
    found = {}
    for folder, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(folder, os.path.dirname(ROOT))
        package = rel.replace(os.sep, '.')
        if package.startswith('climate.tests'):
            dirs[:] = []
            continue
        for name in files:
            if name.endswith('.py'):
                module = package if name == '__init__.py' else \
                    '%s.%s' % (package, name[:-3])
                found[module] = os.path.join(folder, name)
    return found


MODULES = _modules()


def _resolve(module, node):
    """The module a ``from ... import`` names (relative ones resolved)."""
    if not node.level:
        return node.module
    base = module.split('.')
    if not MODULES[module].endswith('__init__.py'):
        base = base[:-1]
    base = base[:len(base) - node.level + 1]
    return '.'.join(base + ([node.module] if node.module else []))


def _imports(module):
    """``(imported module, names taken from it, aliases bound to it)`` of
    ``module``'s climate imports, and its parsed tree."""
    with open(MODULES[module]) as source:
        tree = ast.parse(source.read())
    taken = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split('.')[0] == 'climate':
                    bound = alias.asname or alias.name.split('.')[0]
                    taken.append((alias.name, (), {bound} if alias.asname
                                  else set()))
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            if not source or source.split('.')[0] != 'climate':
                continue
            names = []
            for alias in node.names:
                sub = '%s.%s' % (source, alias.name)
                if sub in MODULES:
                    # a module of the package: its own import
                    taken.append((sub, (), {alias.asname or alias.name}))
                else:
                    names.append(alias.name)
            if names:
                taken.append((source, tuple(names), set()))
    return taken, tree


IMPORTS = {module: _imports(module) for module in MODULES}


def _graph():
    graph = collections.defaultdict(set)
    for module, (taken, _tree) in IMPORTS.items():
        for imported, _names, _aliases in taken:
            if imported in MODULES and imported != module:
                graph[module].add(imported)
    return graph


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        # iterative, so that a deep chain never hits the recursion limit
        work = [(node, iter(sorted(graph[node])))]
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        while work:
            current, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[current])
                if low[current] == index[current]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == current:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[current] = min(low[current], index[child])

    for node in sorted(MODULES):
        if node not in index:
            visit(node)
    return found


def _is_private(name):
    return name.startswith('_') and not (name.startswith('__') and
                                         name.endswith('__'))


def test_no_import_cycle():
    # a package importing its own modules from __init__ is no cycle of
    # two layers; only cycles through modules count
    graph = _graph()
    for package in [m for m in MODULES if MODULES[m].endswith(
            '__init__.py')]:
        graph[package] = {m for m in graph[package]
                          if not m.startswith(package + '.')}
    assert _cycles(graph) == []


def test_lower_layers_import_nothing_of_the_manager_but_its_client():
    wrong = []
    for module, (taken, _tree) in IMPORTS.items():
        lower = module.startswith(('climate.db', 'climate.api',
                                   'climate.plugins', 'climate.scheduling'))
        if not lower:
            continue
        for imported, _names, _aliases in taken:
            if not imported.startswith('climate.manager'):
                continue
            allowed = imported in MANAGER_FOR_LOWER and \
                not module.startswith(('climate.plugins',
                                       'climate.scheduling'))
            if not allowed:
                wrong.append((module, imported))
    assert sorted(wrong) == []


#: The one plugin that takes another's code: a stack's servers are
#: instance slots, placed where that plugin booked them
#: (``booked_hosts``).
PLUGIN_ON_PLUGIN = {
    ('climate.plugins.virtual_stack', 'climate.plugins.virtual_instance'),
}


def _plugin_package(module):
    """``climate.plugins.<type>`` of a module inside a plugin's folder,
    else None (the helpers the plugins share sit beside the folders)."""
    parts = module.split('.')
    if len(parts) < 3 or parts[:2] != ['climate', 'plugins']:
        return None
    package = '.'.join(parts[:3])
    return package if MODULES.get(package, '').endswith(
        '__init__.py') else None


def test_a_plugin_imports_no_other_plugin():
    wrong = set()
    for module, (taken, _tree) in IMPORTS.items():
        own = _plugin_package(module)
        if own is None:
            continue
        for imported, _names, _aliases in taken:
            other = _plugin_package(imported)
            if other is not None and other != own and \
                    (own, other) not in PLUGIN_ON_PLUGIN:
                wrong.add((module, imported))
    assert sorted(wrong) == []


def test_the_plugins_shared_helpers_import_no_plugin():
    wrong = [(module, imported)
             for module, (taken, _tree) in IMPORTS.items()
             if module.startswith('climate.plugins.') and
             _plugin_package(module) is None
             for imported, _names, _aliases in taken
             if _plugin_package(imported) is not None]
    assert wrong == []


#: What the lease's own rules (``climate.lease``) stand on.
LEASE_RULES_IMPORT = {'climate.dates', 'climate.exceptions', 'climate.states',
                      'climate.fields'}


def test_the_lease_rules_import_only_the_low_modules():
    wrong = [(module, imported)
             for module, (taken, _tree) in IMPORTS.items()
             if module == 'climate.lease' or
             module.startswith('climate.lease.')
             for imported, _names, _aliases in taken
             if not imported.startswith('climate.lease') and
             imported not in LEASE_RULES_IMPORT]
    assert wrong == []


def test_scheduling_does_no_io_and_imports_no_other_layer():
    wrong = [(module, imported)
             for module, (taken, _tree) in IMPORTS.items()
             if module.startswith('climate.scheduling')
             for imported, _names, _aliases in taken
             if imported.startswith(('climate.db', 'climate.api',
                                     'climate.manager', 'climate.plugins',
                                     'climate.clients'))]
    assert wrong == []


def test_no_module_uses_another_modules_private_names():
    wrong = []
    for module, (taken, tree) in IMPORTS.items():
        aliases = {}
        for imported, names, bound in taken:
            if imported == module:
                continue
            wrong.extend((module, imported, name) for name in names
                         if _is_private(name))
            for alias in bound:
                aliases[alias] = imported
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(
                    node.value, ast.Name) and node.value.id in aliases and \
                    _is_private(node.attr):
                wrong.append((module, aliases[node.value.id], node.attr))
    assert sorted(set(wrong)) == []
