"""Test doubles and builders shared across the suite: one clock, one executor, API Gateway events."""
