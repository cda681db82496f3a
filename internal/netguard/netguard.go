// Package netguard tells public network addresses from the others, for
// the destination checks of every client the module makes to a URL it
// was given (OAuth endpoints, OpenAPI servers): a URL from a document or
// a server may name an address inside the network the program runs in.
package netguard

import (
	"net"
	"net/netip"
)

// Address ranges that are not public beside those netip names.
var (
	thisNetwork   = netip.MustParsePrefix("0.0.0.0/8")     // RFC 791: "this network"
	cgnat         = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598: carrier-grade NAT
	ietf          = netip.MustParsePrefix("192.0.0.0/24")  // RFC 6890: protocol assignments
	benchmarking  = netip.MustParsePrefix("198.18.0.0/15") // RFC 2544
	reserved4     = netip.MustParsePrefix("240.0.0.0/4")   // RFC 1112, with the broadcast address
	v4Compatible  = netip.MustParsePrefix("::/96")         // deprecated IPv4-compatible addresses
	siteLocal     = netip.MustParsePrefix("fec0::/10")     // deprecated site-local
	nat64         = netip.MustParsePrefix("64:ff9b::/96")  // RFC 6052: IPv4 behind NAT64
	nat64Local    = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour     = netip.MustParsePrefix("2002::/16") // RFC 3056: IPv4 in bits 16-48
	notPublicNets = []struct {
		p   netip.Prefix
		why string
	}{
		{thisNetwork, "a \"this network\" address"},
		{cgnat, "a shared (carrier-grade NAT) address"},
		{ietf, "a reserved address"},
		{benchmarking, "a reserved address"},
		{reserved4, "a reserved address"},
		{v4Compatible, "a reserved address"},
		{siteLocal, "a site-local address"},
		{nat64Local, "a local NAT64 address"},
	}
)

// NotPublic says why ip is not a public address, or "" when it is one:
// loopback, unspecified, private, link-local, multicast, the special
// ranges of RFC 6890 and the deprecated ones, and an IPv6 address that
// carries a non-public IPv4 one (NAT64, 6to4).
func NotPublic(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "not a valid address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip.IsMulticast():
		return "a multicast address"
	}
	for _, n := range notPublicNets {
		if n.p.Contains(ip) {
			return n.why
		}
	}
	// IPv6 addresses that carry an IPv4 one are as public as it is.
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		if why := NotPublic(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
			return "a NAT64 address of " + why
		}
	case sixToFour.Contains(ip):
		if why := NotPublic(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
			return "a 6to4 address of " + why
		}
	}
	return ""
}

// Dialed reads address as a dialer's Control function gets it (host:port,
// or a bare host) and says why its IP is not a public one ("" when it
// is); ok is false when address holds no IP address.
func Dialed(address string) (ip netip.Addr, why string, ok bool) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err = netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, "", false
	}
	return ip, NotPublic(ip), true
}
