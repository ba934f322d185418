"""Pod IPs from a node's podCIDR (`nodes.kubelet.ipam`): the gateway is skipped, the lowest free
address goes first, a released address is handed out again, a restored one is taken only when it
belongs to the range and is free, and a full range fails as the host-local CNI plugin does."""

from __future__ import annotations

import pytest

from nodes.kubelet import ipam


def test_pods_get_the_lowest_free_address_after_the_gateway() -> None:
    ips = ipam.PodIPs("10.128.3.0/24")
    assert [ips.allocate("a"), ips.allocate("b"), ips.allocate("c")] == ["10.128.3.2", "10.128.3.3", "10.128.3.4"]
    assert ips.allocate("b") == "10.128.3.3"  # the same pod asks again: the same address
    ips.release("b")
    assert ips.allocate("d") == "10.128.3.3"


def test_restore_takes_back_only_a_free_address_of_the_range() -> None:
    ips = ipam.PodIPs("10.128.3.0/24")
    ips.restore("a", "10.128.3.7")
    ips.restore("b", "10.128.3.7")  # already taken
    ips.restore("c", "10.128.4.7")  # another node's range
    ips.restore("e", "10.128.3.255")  # the broadcast address
    ips.restore("f", "not an address")
    assert ips.allocate("a") == "10.128.3.7"
    assert ips.allocate("b") == "10.128.3.2"


def test_a_full_range_is_exhausted_with_the_cni_message() -> None:
    ips = ipam.PodIPs("10.0.0.0/29")  # hosts .1-.6, .1 the gateway
    assert [ips.allocate(str(i)) for i in range(5)] == [f"10.0.0.{n}" for n in range(2, 7)]
    with pytest.raises(ipam.Exhausted, match="no IP addresses available in range set"):
        ips.allocate("one too many")


def test_ipv6_ranges_keep_their_family() -> None:
    ips = ipam.PodIPs("fd00:10::/120")
    assert ips.allocate("a") == "fd00:10::2"
