"""Simulated retailers and relays for the sandbox: realistic answers in the shapes the catalog specs validate,
faults on demand."""
