"""Thin Lambda entry points (probe, api, ops) and the one wiring module that builds adapters per container."""
