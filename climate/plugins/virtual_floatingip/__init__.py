"""``virtual:floatingip``: specific addresses of an external network,
reserved for a time window (see doc/source/floatingips.rst)."""
