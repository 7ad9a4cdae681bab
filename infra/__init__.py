"""The CDK app of Route Health (DESIGN §8): one construct per concern, composed by `stack.RouteHealthStack`."""
