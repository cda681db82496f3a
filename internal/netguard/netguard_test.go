package netguard

import (
	"net/netip"
	"testing"
)

func TestNotPublic(t *testing.T) {
	for addr, public := range map[string]bool{
		"8.8.8.8":            true,
		"2606:4700::1111":    true,
		"127.0.0.1":          false,
		"::1":                false,
		"10.1.2.3":           false,
		"169.254.169.254":    false,
		"100.64.0.1":         false,
		"0.0.0.0":            false,
		"240.0.0.1":          false,
		"fe80::1":            false,
		"64:ff9b::7f00:1":    false, // NAT64 of 127.0.0.1
		"64:ff9b::808:808":   true,  // NAT64 of 8.8.8.8
		"2002:7f00:1::":      false, // 6to4 of 127.0.0.1
		"::ffff:192.168.0.1": false,
		"fec0::1":            false,
	} {
		why := NotPublic(netip.MustParseAddr(addr))
		if (why == "") != public {
			t.Errorf("NotPublic(%s) = %q, want public %v", addr, why, public)
		}
	}
}
