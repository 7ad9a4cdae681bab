"""Adapters: the outside world behind the core's ports (DynamoDB verdict store, direct and relay HTTP, secrets)."""
