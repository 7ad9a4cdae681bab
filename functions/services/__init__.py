"""The services: what the functions do, over ports only (`functions/services/ports.py`).

- `lookup`: `Lookup`, which sends every upstream call of one API request through the router, in one budget;
- `queries`: the lookup endpoints' query models and the operations each becomes;
- `probe_run`: one probe run (slot claim, the checks, the verdict writes).

No AWS or HTTP library here: adapters implement the ports, handlers wire them in.
"""
