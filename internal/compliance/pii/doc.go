// Package pii detects personal data in text: EMAIL, PHONE (validated with
// nyaruka/phonenumbers' metadata), SSN, CREDIT_CARD (IIN ranges + length +
// Luhn), IBAN (country length + mod-97), IP_ADDRESS (v4, v6; netmask and
// version-string guards), PERSON (names supported by context),
// DATE_OF_BIRTH, PASSPORT and DRIVERS_LICENSE (only where a context word
// supports them).
//
// # How
//
// New returns a Detectors (a detect.Detector) for some or all types. Its
// Detect makes few passes over the text, none with a regular expression:
//
//   - one over runs of digits joined by short separators (" -./()"), which
//     it hands to the card, SSN, IPv4 and phone validators; groups that form
//     a date or a time, that are stuck to a word (v1.2.3.4, SKU-1234,
//     a716-4466…), or that continue an IBAN-shaped chain are no value;
//   - one each from every '@' (e-mail), every ':' (IPv6) and every
//     capitalised country code followed by two digits (IBAN);
//   - one over the words, where key words announce what follows: a title
//     or a greeting a name, "born"/"DOB"/"Geburtsdatum" a date, "passport"
//     and "driver's licence" a document number.
//
// Each candidate is validated (Luhn and the brands' IIN ranges, mod 97,
// the SSA's area/group/serial rules, net/netip, phonenumbers' per-region
// patterns), then scored 0–1 with the words around it (near, which means
// what detect.Near means without allocating): "card" raises a card, "order"
// or "tracking" just before it lowers it below MinScore, and findings below
// MinScore are not reported. Rule names what matched, never the value.
//
// # Phones
//
// A number after '+', "00" or "011" is split into calling code and national
// number; one of ten digits (area code and exchange from 2) is read as North
// American. Other national numbers are read in the region a nearby word
// names ("London", "Deutschland", "+44" earlier in the text), else, when
// they are written like European numbers (a trunk 0 and spaces, or pairs of
// digits) or a phone word is near, tried in a few regions (GB, DE, FR, IT,
// NL, AT, CH, BE with a trunk 0; ES, IT, PL, PT without). Numbers written
// exactly like North American ones but not valid (555 area codes) still
// count, lower. Validation is bounded per text (phoneBudget, phoneEffort).
//
// # Names
//
// PERSON needs a cue: a title (Mr, Dr, Frau), a greeting (Dear; Hi, Hello
// with a listed first name or a comma), an introduction ("my name is", "I
// am"), a label ("Name:", "Patient", "account holder"), a verb ("reach",
// "call" … "at"), a valediction with the name on the next line, or a listed
// first name followed by a capitalised surname. The list of first names is
// the US Census 1990 list (names/SOURCES.md).
//
// It imports, of svc, only internal/compliance/detect.
package pii
