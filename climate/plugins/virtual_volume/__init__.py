"""The ``virtual:volume`` resource plugin: volume capacity on the pools
of ``[volumes] inventory`` (``plugin``), and what it does in the cloud
(``backends``)."""
