"""Simulated retailers and relays for the sandbox: realistic answers per the upstream catalog, faults on demand."""
