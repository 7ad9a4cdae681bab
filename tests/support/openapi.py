"""The OpenAPI document the lookup function serves, read as the tests read it."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from functions.handlers import api
from functions.handlers.settings import DAILY_LIMITED_PREFIXES


@cache
def served_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(api.openapi_json(DAILY_LIMITED_PREFIXES))  # the default settings
    return document


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in served_document()["paths"].items()
        for method, operation in item.items()
    ]


def template_of(path: str) -> str:
    templates: list[str] = list(served_document()["paths"])
    for template in templates:
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path):
            return template
    raise AssertionError(f"{path} is not documented")
