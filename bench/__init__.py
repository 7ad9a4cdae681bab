"""Benchmarks for Route Health (`make bench`): see bench/README.md."""
