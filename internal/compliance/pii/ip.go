package pii

import (
	"net/netip"
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

var (
	ipWords = newWordSet("ip", "ips", "ipv4", "ipv6", "address", "addr", "server", "host", "hostname",
		"ping", "ssh", "connect", "connected", "connection", "from", "gateway", "dns", "router", "client",
		"proxy", "firewall", "subnet", "vpn", "nat", "login", "logged", "remote", "src", "dst",
		"source", "destination", "peer", "endpoint", "blocked", "whitelist", "allowlist", "curl")
	// A dotted quad right after one of these is a version, a section or a
	// figure number, not an address.
	notIPWords = newWordSet("version", "versions", "ver", "v", "release", "rel", "build", "rev",
		"revision", "firmware", "fw", "patch", "update", "kernel", "section", "sections", "sec",
		"chapter", "ch", "clause", "article", "art", "figure", "fig", "table", "tab", "step", "item",
		"paragraph", "para", "rule", "oid", "snmp", "mib", "§", "appendix", "annex", "verse", "par")
	maskWords = newWordSet("netmask", "mask", "subnet mask", "wildcard")
)

// ipv4InRun finds IPv4 addresses among the groups of r: exactly four groups
// joined by single dots (a fifth makes it an OID or a section number), each
// a decimal octet as net/netip reads it (no leading zeros).
func ipv4InRun(text string, r *numRun, dst []detect.Finding) []detect.Finding {
	for i := 0; i < r.n; {
		j := i
		for j+1 < r.n && r.sep(text, j+1) == "." {
			j++
		}
		glued := i == 0 && r.gluedBefore || j == r.n-1 && r.gluedAfter
		if j-i == 3 && !glued && !(i == 0 && r.plus) {
			var isAddr bool
			dst, isAddr = ipv4(text, r.g[i].start, r.g[j].end, dst)
			if isAddr {
				r.use(i, j) // an address (or a version) is no phone
			}
		}
		if j-i >= 4 && !pairs(r, i, j) {
			r.use(i, j) // nor an OID or an outline number
		}
		i = j + 1
	}
	return dst
}

// ipv4 checks text[start:end], four dotted groups, as an address; isAddr
// reports whether it reads as one, reported or not.
func ipv4(text string, start, end int, dst []detect.Finding) (_ []detect.Finding, isAddr bool) {
	if v6Tail(text, start) {
		return dst, true // the tail of an IPv6 address (::ffff:192.0.2.128)
	}
	a, err := netip.ParseAddr(text[start:end])
	if err != nil || !a.Is4() {
		return dst, false
	}
	// Loopback and unspecified addresses name no host of anyone's.
	if a.IsUnspecified() || a.IsLoopback() {
		return dst, true
	}
	// A dot after the address continuing into a digit would have joined
	// the chain; a '.' followed by a letter is a hostname or a file name
	// ("1.2.3.4.in-addr.arpa", "1.2.3.4.tar.gz").
	if end+1 < len(text) && text[end] == '.' && isLetter(text[end+1]) {
		return dst, true
	}
	b := a.As4()
	if isMask(b) {
		return dst, true
	}
	if before(text, start, 24, notIPWords) {
		return dst, true
	}
	score := 0.85
	small := b[0] < 10 && b[1] < 10 && b[2] < 10 && b[3] < 10
	switch {
	case near(text, start, end, 40, maskWords):
		score = 0.3
	case near(text, start, end, 48, ipWords):
		score = 0.95
	case small:
		// 1.2.3.4 with nothing around it is as often a version or an
		// outline number as an address.
		score = 0.45
	}
	return append(dst, finding(detect.IPAddress, start, end, score, "ipv4")), true
}

// pairs reports whether groups i..j of r all have two digits: a French
// phone number written with dots (01.42.68.53.00), not an OID.
func pairs(r *numRun, i, j int) bool {
	for k := i; k <= j; k++ {
		if r.g[k].end-r.g[k].start != 2 {
			return false
		}
	}
	return true
}

// v6Tail reports whether the dotted quad at start ends an IPv6 token: the
// hex digits and colons right before it hold two colons.
func v6Tail(text string, start int) bool {
	colons := 0
	for i := start - 1; i >= 0 && start-i <= 40; i-- {
		c := text[i]
		if c == ':' {
			colons++
		} else if !isHex(c) {
			break
		}
	}
	return colons >= 2
}

// isMask reports whether b is a netmask whose first octet is 255 (ones
// then zeros: 255.255.255.0, 255.255.240.0, 255.255.255.255).
func isMask(b [4]byte) bool {
	if b[0] != 255 {
		return false
	}
	m := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	inv := ^m
	return inv&(inv+1) == 0
}

// scanIPv6 finds IPv6 addresses: a token of hex digits, colons (at least
// two) and dots (an embedded IPv4 tail) not stuck to a word, that
// net/netip parses, with at least three groups or a "::" and two groups.
func scanIPv6(text string, dst []detect.Finding) []detect.Finding {
	from := 0
	for from < len(text) {
		k := strings.IndexByte(text[from:], ':')
		if k < 0 {
			break
		}
		c := from + k
		start := c
		for start > 0 && (isHex(text[start-1]) || text[start-1] == ':' || text[start-1] == '.') {
			start--
		}
		end := c
		for end < len(text) && (isHex(text[end]) || text[end] == ':' || text[end] == '.') {
			end++
		}
		from = end + 1
		for start < end && text[start] == '.' {
			start++
		}
		for end > start && text[end-1] == '.' {
			end--
		}
		if end-start < 3 || end-start > 45 {
			continue
		}
		if start > 0 && (isWordByte(text[start-1]) || text[start-1] == '.') {
			continue
		}
		if end < len(text) && isWordByte(text[end]) {
			continue
		}
		tok := text[start:end]
		colons, groups := 0, 0
		prevColon := true
		for i := 0; i < len(tok); i++ {
			switch tok[i] {
			case ':':
				colons++
				prevColon = true
			case '.':
				prevColon = false
			default:
				if prevColon {
					groups++
				}
				prevColon = false
			}
		}
		double := strings.Contains(tok, "::")
		if colons < 2 || groups < 2 || (groups < 3 && !double) {
			continue
		}
		a, err := netip.ParseAddr(tok)
		if err != nil || !a.Is6() || a.Zone() != "" || a.Unmap().IsLoopback() || a.Unmap().IsUnspecified() {
			continue
		}
		score := 0.9
		if near(text, start, end, 48, ipWords) {
			score = 0.97
		}
		dst = append(dst, finding(detect.IPAddress, start, end, score, "ipv6"))
	}
	return dst
}
