"""The CDK app of Route Health (docs/design.md#infrastructure-and-observability): one construct per concern,
composed by `stack.RouteHealthStack`."""
