"""The reference relay server, `route-health relay` (docs/relay.md). Installed with the `relay` extra; the
Lambda package never contains or imports it."""
