package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func TestIPAddress(t *testing.T) {
	runTable(t, detect.IPAddress, []tcase{
		{"v4", "server at 10.0.0.1.", []string{"10.0.0.1"}},
		{"v4 with port", "curl http://192.168.1.254:8080/x", []string{"192.168.1.254"}},
		{"v4 cidr", "allow 172.16.0.0/12", []string{"172.16.0.0"}},
		{"v4 after user@", "ssh deploy@203.0.113.7 -i key", []string{"203.0.113.7"}},
		{"v4 small with context", "DNS server 8.8.8.8", []string{"8.8.8.8"}},
		{"v4 range", "10.0.0.1 - 10.0.0.255", []string{"10.0.0.1", "10.0.0.255"}},
		{"v6", "from 2001:db8::8a2e:370:7334 today", []string{"2001:db8::8a2e:370:7334"}},
		{"v6 full", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", []string{"2001:0db8:85a3:0000:0000:8a2e:0370:7334"}},
		{"v6 link local", "fe80::1ff:fe23:4567:890a", []string{"fe80::1ff:fe23:4567:890a"}},
		{"v6 bracketed", "[2001:db8::1]:443", []string{"2001:db8::1"}},
		{"v6 mapped v4", "::ffff:192.0.2.128", []string{"::ffff:192.0.2.128"}},
		{"v6 in log line", "nginx: 2208:feca:b9d2:2971:8dd3:aef7:6fc8:4f8f - GET /", []string{"2208:feca:b9d2:2971:8dd3:aef7:6fc8:4f8f"}},

		{"version with v", "upgrade to v1.2.3.4", nil},
		{"version word", "version 10.0.0.1 is out", nil},
		{"build", "build 4.2.0.17", nil},
		{"netmask", "netmask 255.255.255.0", nil},
		{"mask without word", "255.255.240.0", nil},
		{"oid", "OID 1.3.6.1.4.1.311", nil},
		{"five parts", "1.2.3.4.5", nil},
		{"section", "see section 2.1.3.4", nil},
		{"small without context", "1.2.3.4", nil},
		{"octet too big", "999.1.1.1", nil},
		{"leading zero", "010.1.1.1", nil},
		{"unspecified", "listen on 0.0.0.0", nil},
		{"loopback", "curl http://127.0.0.1:8080/ and [::1]:80", nil},
		{"mapped unspecified", "::ffff:0.0.0.0", nil},
		{"reverse dns name", "4.3.2.1.in-addr.arpa", nil},
		{"time", "at 12:30:45", nil},
		{"mac", "00:1A:2B:3C:4D:5E", nil},
		{"c++", "std::vector<int>", nil},
		{"loopback v6 alone", "::1", nil},
		{"hash with colon", "sha256:e3b0c44298fc1c149afbf4c8996fb924", nil},
		{"ratio", "aspect 16:9", nil},
	})
}
