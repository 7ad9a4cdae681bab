"""What a newcomer sees first: `ready:` means the verdicts are in and the first lookup already goes direct."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.e2e


def test_the_first_lookup_after_ready_goes_direct(just_started: Any) -> None:
    response, calls = just_started.lookup("/api/cu/products", {"keyword": "cola", "limit": 1})

    assert response.status_code == 200, response.text
    assert calls == {"direct:cu-prime": 1, "direct:cu-stock": 1}
