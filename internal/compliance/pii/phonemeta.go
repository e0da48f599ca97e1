package pii

import (
	"regexp"
	"strings"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// phonenumbers.IsValidNumber costs about 10 µs and 45 allocations a call
// (it builds each pattern string anew and tries up to ten number types one
// by one). validNSN gives the same answer from the same metadata — the
// number's length is a possible length of the region, its national
// significant number matches the region's general pattern and the pattern
// of one of its number types — with one match of a precompiled union of
// the type patterns, compiled the first time a region is used, and no
// allocation.

// phoneMeta is one region's validation data.
type phoneMeta struct {
	md      *phonenumbers.PhoneMetadata
	once    sync.Once
	lengths uint64         // bit n: n digits is a possible length
	general *regexp.Regexp // the general description, anchored
	types   *regexp.Regexp // the union of the number types' patterns, anchored; nil: none
}

var phoneMetas struct {
	once sync.Once
	byCC map[int][]*phoneMeta // main region first
}

func loadPhoneMetas() {
	phoneMetas.byCC = map[int][]*phoneMeta{}
	coll, err := phonenumbers.MetadataCollection()
	if err != nil || coll == nil {
		return
	}
	for _, md := range coll.GetMetadata() {
		cc := int(md.GetCountryCode())
		m := &phoneMeta{md: md}
		if md.GetMainCountryForCode() {
			phoneMetas.byCC[cc] = append([]*phoneMeta{m}, phoneMetas.byCC[cc]...)
		} else {
			phoneMetas.byCC[cc] = append(phoneMetas.byCC[cc], m)
		}
	}
}

func (m *phoneMeta) compile() {
	gd := m.md.GetGeneralDesc()
	for _, l := range gd.GetPossibleLength() {
		if l > 0 && l < 64 {
			m.lengths |= 1 << l
		}
	}
	if p := gd.GetNationalNumberPattern(); p != "" {
		m.general, _ = regexp.Compile("^(?:" + p + ")$")
	}
	var alts []string
	for _, d := range []*phonenumbers.PhoneNumberDesc{m.md.GetFixedLine(), m.md.GetMobile(),
		m.md.GetTollFree(), m.md.GetPremiumRate(), m.md.GetSharedCost(), m.md.GetPersonalNumber(),
		m.md.GetVoip(), m.md.GetPager(), m.md.GetUan(), m.md.GetVoicemail()} {
		pl := d.GetPossibleLength()
		if p := d.GetNationalNumberPattern(); p != "" && !(len(pl) == 1 && pl[0] == -1) {
			alts = append(alts, "(?:"+p+")")
		}
	}
	if len(alts) > 0 {
		m.types, _ = regexp.Compile("^(?:" + strings.Join(alts, "|") + ")$")
	}
}

func (m *phoneMeta) valid(nsn []byte) bool {
	m.once.Do(m.compile)
	if len(nsn) == 0 || len(nsn) >= 64 || m.lengths&(1<<len(nsn)) == 0 || m.general == nil || m.types == nil {
		return false
	}
	return m.general.Match(nsn) && m.types.Match(nsn)
}

// validNSN reports whether nsn, a national significant number, is a
// valid number of a region of country calling code cc, and which.
func validNSN(cc int, nsn []byte) (string, bool) {
	phoneMetas.once.Do(loadPhoneMetas)
	for _, m := range phoneMetas.byCC[cc] {
		if m.valid(nsn) {
			return m.md.GetId(), true
		}
	}
	return "", false
}

// splitCC splits the digits of an international number (after '+' or
// "00") into its country calling code and national significant number.
// Calling codes are prefix-free, so the first known prefix is the code.
func splitCC(digits []byte) (int, []byte, bool) {
	cc := 0
	for k := 0; k < 3 && k < len(digits); k++ {
		cc = cc*10 + int(digits[k]-'0')
		if callingCodes[cc] {
			return cc, digits[k+1:], true
		}
	}
	return 0, nil, false
}
