"""The services: what the functions do (routing, lookups, the probe run, the daily quota, the snapshot cache),
over ports only (`functions/services/ports.py`). No AWS or HTTP library here: adapters implement the ports,
handlers wire them in."""
