#!/usr/bin/env python3
"""CDK entry point (`cdk.json` runs it). Context: stage (default prod), region (default ap-northeast-2),
alarmEmail, logLevel, runbookUrl, probeReservedConcurrency, layerDir. Stack parameters: OyRelayUrl,
ConvenienceRelayUrl, DtryxRelayUrl (README.md, Deploy)."""

from infra.stack import create_app

if __name__ == "__main__":
    app, _ = create_app()
    app.synth()
