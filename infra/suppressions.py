"""cdk-nag (v3) acknowledgments: every one carries its reason next to the construct it applies to.

The bare rule id (e.g. `AwsSolutions-IAM5[Resource::*]`) is honoured both when the pack runs as a synth
plugin (`cdk synth`) and by `validate_scope` (the tests); the `AwsSolutions::` form only by the former.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def acknowledge(construct: IConstruct, rule_id: str, reason: str) -> None:
    Validations.of(construct).acknowledge(Acknowledgment(id=rule_id, reason=reason))
