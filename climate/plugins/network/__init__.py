"""The ``network`` resource type: reservable network segments (VLAN,
VXLAN, flat) made Neutron networks for a lease's window."""
