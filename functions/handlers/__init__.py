"""Thin Lambda entry points (api, mcp, ops, probe) and the composition root that builds what each function uses."""
