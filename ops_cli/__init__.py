"""`route-health ops`: the operator's command line for a deployed stack or the sandbox.

`connection` finds the API URL and the operator secret (stack outputs and Secrets Manager, or a URL and a
private secret file), `api` speaks the operator endpoints, `snapshot` reads their snapshot, `report` renders
it, and `cli` holds the commands. `lookup` is `route-health lookup`; `untrusted` is how both commands read an
answer and print its text.
"""
