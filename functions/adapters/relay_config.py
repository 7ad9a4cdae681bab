"""Each relay group's endpoint, from the relay URLs of the typed settings and the secret's credentials
(docs/relay.md). CGV with no setting of its own (no `CGV_RELAY_URL`, token or Access key) uses the Dtryx
relay's, whose process serves it: always one group's set, never a mix."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from functions.adapters.relay import RelayConfigError, RelayEndpoint
from functions.adapters.secrets import Secrets
from functions.core import RelayGroup

RelayUrls = Mapping[RelayGroup, str | None]
"""Each group's relay base URL as configured (None: unset)."""


def relay_settings_of(group: RelayGroup, urls: RelayUrls, secrets: Secrets) -> RelayGroup:
    """Whose relay settings `group` uses: its own, or for CGV without any of its own, the Dtryx relay's."""
    if group is RelayGroup.CGV and urls.get(group) is None and not secrets.has_own_relay(group):
        return RelayGroup.DTRYX
    return group


def relay_url(group: RelayGroup, urls: RelayUrls, secrets: Secrets) -> str | None:
    return urls.get(relay_settings_of(group, urls, secrets))


def relay_endpoints(
    urls: RelayUrls, secrets: Secrets, *, on_invalid: Callable[[RelayGroup, RelayConfigError], None]
) -> dict[RelayGroup, RelayEndpoint | RelayConfigError]:
    """Each group with a relay URL: its endpoint, or why it is unusable (`on_invalid` is told; the group's
    verdict is then `configuration`)."""
    endpoints: dict[RelayGroup, RelayEndpoint | RelayConfigError] = {}
    for group in RelayGroup:
        settings_of = relay_settings_of(group, urls, secrets)
        url = urls.get(settings_of)
        if url is None:
            continue
        credentials = secrets.relay(settings_of).credentials()
        try:
            endpoints[group] = RelayEndpoint.parse(group, url, credentials)
        except RelayConfigError as error:
            on_invalid(group, error)
            endpoints[group] = error
    return endpoints
