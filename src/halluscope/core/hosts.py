"""Where a local web app may listen: loopback unless the user allows remote, and wildcard binds named."""

from __future__ import annotations

import ipaddress
import socket

from halluscope.core.errors import HalluscopeError


def parse_host(host: str, allow_remote: bool, what: str = "the app") -> tuple[str, bool]:
    """The bind address without brackets, and whether it is a wildcard; HalluscopeError for a name or a remote IP."""
    bare = host.strip().strip("[]")
    try:
        ip = ipaddress.ip_address("127.0.0.1" if bare == "localhost" else bare)
    except ValueError:
        raise HalluscopeError(
            f"host: expected an IP address such as 127.0.0.1 or ::1 (or 'localhost'), got {host!r}. "
            "Fix: give the address to bind, not a host name"
        ) from None
    if not allow_remote and not ip.is_loopback:
        raise HalluscopeError(
            f"refusing to serve {what} on {host}: the app binds to loopback by default; "
            "pass --allow-remote to expose it (the token still applies)"
        )
    return bare, ip.is_unspecified


def _wildcard_host(given: str, port: int) -> bool:
    """A Host header an app bound to 0.0.0.0 / :: accepts: an IP literal, localhost or this machine's own name,
    with the app's port. Any other name may be a DNS-rebinding attacker's."""
    host, sep, p = given.rpartition(":")
    if not sep or p != str(port):
        return False
    bare = host.strip("[]").lower()
    try:
        ipaddress.ip_address(bare)
        return True
    except ValueError:
        pass
    names = {"localhost", socket.gethostname().lower(), socket.getfqdn().lower()}
    return bare in names
