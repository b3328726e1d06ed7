"""The ``virtual:instance`` resource plugin: instance slots of a shape.

See ``plugin.VirtualInstancePlugin`` and doc/source/instances.rst.
"""
