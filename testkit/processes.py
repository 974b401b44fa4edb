"""What the tests check about the servers they start, read from /proc on their own: an oracle
independent of dbt_multijoin.server's bookkeeping."""

from __future__ import annotations

import ipaddress
from pathlib import Path


def listening_addresses(port: int) -> set[str]:
    """Local IPv4 addresses with a socket listening on `port` (Linux /proc/net/tcp and tcp6;
    an IPv4-mapped IPv6 address counts as its IPv4 address)."""
    addresses = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            hex_address, local_port = local.split(":")
            if state != "0A" or int(local_port, 16) != port:
                continue
            # The kernel prints each 32-bit word in host (little-endian) byte order.
            raw = b"".join(bytes.fromhex(hex_address[i : i + 8])[::-1] for i in range(0, len(hex_address), 8))
            address = ipaddress.ip_address(raw)
            addresses.add(str(getattr(address, "ipv4_mapped", None) or address))
    return addresses


def running(pid: int) -> bool:
    """A live process (not gone, not a zombie waiting for its new parent to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
