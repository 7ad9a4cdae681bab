#!/usr/bin/env python3
"""CDK entry point (`cdk.json` runs it). Context: stage (default prod), region (default ap-northeast-2),
runbookUrl, snapStart, layerDir. Every operator setting is a stack parameter (infra/parameters.py; README.md,
Configuration)."""

from infra.stack import create_app

if __name__ == "__main__":
    app, _ = create_app()
    app.synth()
