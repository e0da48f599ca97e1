package saml

import (
	"errors"
	"strings"
	"time"

	"github.com/beevik/etree"
)

// The SAML 2.0 namespaces.
const (
	nsAssertion = "urn:oasis:names:tc:SAML:2.0:assertion"
	nsProtocol  = "urn:oasis:names:tc:SAML:2.0:protocol"
	nsMetadata  = "urn:oasis:names:tc:SAML:2.0:metadata"
)

const statusSuccess = "urn:oasis:names:tc:SAML:2.0:status:Success"

// locate checks the document's outline: the root is a saml:Assertion, or a
// samlp:Response whose status is Success and which holds exactly one
// saml:Assertion child and no EncryptedAssertion (svc holds no decryption
// key); and the whole document holds exactly one saml:Assertion, so a
// second assertion — unsigned, before or after the signed one, or nested in
// another element — is refused before anything is read.
func locate(root *etree.Element) error {
	switch {
	case is(root, nsAssertion, "Assertion"):
	case is(root, nsProtocol, "Response"):
		if err := checkStatus(root); err != nil {
			return err
		}
		if countAll(root, nsAssertion, "EncryptedAssertion") > 0 {
			return fail(ReasonMalformed, "encrypted assertions are not supported", nil)
		}
		if len(children(root, nsAssertion, "Assertion")) != 1 {
			return fail(ReasonMalformed, "a Response must hold exactly one Assertion", nil)
		}
	default:
		return fail(ReasonMalformed, "the document is neither a SAML 2.0 Assertion nor a Response", nil)
	}
	if countAll(root, nsAssertion, "Assertion") != 1 {
		return fail(ReasonMalformed, "the document must hold exactly one Assertion", nil)
	}
	return nil
}

// checkStatus requires a Response's top-level StatusCode to be Success.
func checkStatus(resp *etree.Element) error {
	status, err := child(resp, nsProtocol, "Status")
	if err != nil || status == nil {
		return fail(ReasonMalformed, "a Response without one Status", err)
	}
	code, err := child(status, nsProtocol, "StatusCode")
	if err != nil || code == nil {
		return fail(ReasonMalformed, "a Response without one StatusCode", err)
	}
	if code.SelectAttrValue("Value", "") != statusSuccess {
		return fail(ReasonStatus, "the identity provider did not report success", nil)
	}
	return nil
}

// window is what the checks need of the clock and of the service provider.
type window struct {
	now      time.Time
	skew     time.Duration
	audience string // the service provider's entity id
	issuer   string // the identity provider's entity id; "" skips the check
}

// checkAssertion checks the verified assertion a: version 2.0, the issuer
// when one is expected, Conditions (NotBefore, NotOnOrAfter, and at least
// one AudienceRestriction, each of which must name the service provider),
// and every SubjectConfirmationData's NotBefore and NotOnOrAfter. Times are
// compared with w.skew of tolerance either way. It returns the assertion's
// expiry, the earliest NotOnOrAfter; an assertion with none never expires
// and is refused.
func checkAssertion(a *etree.Element, w window) (time.Time, error) {
	if a.SelectAttrValue("Version", "") != "2.0" {
		return time.Time{}, fail(ReasonMalformed, "the Assertion is not SAML 2.0", nil)
	}
	if err := checkIssuer(a, w.issuer); err != nil {
		return time.Time{}, err
	}
	cond, err := child(a, nsAssertion, "Conditions")
	if err != nil {
		return time.Time{}, fail(ReasonMalformed, "several Conditions", err)
	}
	if cond == nil {
		return time.Time{}, fail(ReasonAudience, "no Conditions, so no AudienceRestriction", nil)
	}
	var until time.Time
	if err := checkTimes(cond, w, &until); err != nil {
		return time.Time{}, err
	}
	if err := checkAudience(cond, w.audience); err != nil {
		return time.Time{}, err
	}
	if err := checkSubject(a, w, &until); err != nil {
		return time.Time{}, err
	}
	if until.IsZero() {
		return time.Time{}, fail(ReasonMalformed, "the Assertion has no NotOnOrAfter", nil)
	}
	return until, nil
}

func checkIssuer(a *etree.Element, want string) error {
	if want == "" {
		return nil
	}
	iss, err := child(a, nsAssertion, "Issuer")
	if err != nil || iss == nil {
		return fail(ReasonIssuer, "the Assertion has no single Issuer", err)
	}
	got, ok := text(iss)
	if !ok || strings.TrimSpace(got) != want {
		return fail(ReasonIssuer, "the Assertion's Issuer is not the identity provider", nil)
	}
	return nil
}

// checkTimes checks el's NotBefore and NotOnOrAfter attributes, each
// optional, and lowers *until to NotOnOrAfter.
func checkTimes(el *etree.Element, w window, until *time.Time) error {
	if s := el.SelectAttr("NotBefore"); s != nil {
		nb, err := parseInstant(s.Value)
		if err != nil {
			return fail(ReasonMalformed, "an unreadable NotBefore", err)
		}
		if w.now.Add(w.skew).Before(nb) {
			return fail(ReasonNotYetValid, "the assertion is not valid yet ("+el.Tag+" NotBefore)", nil)
		}
	}
	if s := el.SelectAttr("NotOnOrAfter"); s != nil {
		noa, err := parseInstant(s.Value)
		if err != nil {
			return fail(ReasonMalformed, "an unreadable NotOnOrAfter", err)
		}
		if !w.now.Add(-w.skew).Before(noa) {
			return fail(ReasonExpired, "the assertion has expired ("+el.Tag+" NotOnOrAfter)", nil)
		}
		if until.IsZero() || noa.Before(*until) {
			*until = noa
		}
	}
	return nil
}

// parseInstant reads an xs:dateTime; SAML requires UTC with a zone, which
// RFC 3339 requires too (fractional seconds are accepted).
func parseInstant(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, errors.New("not an xs:dateTime with a zone")
	}
	return t, nil
}

// checkAudience requires at least one AudienceRestriction and each to name
// audience among its Audience elements (SAML core 2.5.1.4: the
// restrictions are conjunctive, their audiences disjunctive).
func checkAudience(cond *etree.Element, audience string) error {
	restrictions := children(cond, nsAssertion, "AudienceRestriction")
	if len(restrictions) == 0 {
		return fail(ReasonAudience, "no AudienceRestriction", nil)
	}
	for _, r := range restrictions {
		if !names(r, audience) {
			return fail(ReasonAudience, "the AudienceRestriction does not name this service provider", nil)
		}
	}
	return nil
}

func names(restriction *etree.Element, audience string) bool {
	for _, a := range children(restriction, nsAssertion, "Audience") {
		if v, ok := text(a); ok && strings.TrimSpace(v) == audience {
			return true
		}
	}
	return false
}

// checkSubject checks the times of every SubjectConfirmationData. The
// confirmation method, Recipient and InResponseTo are not checked: the
// assertion arrives in a header, not at an assertion consumer service, and
// svc sends no AuthnRequest to match.
func checkSubject(a *etree.Element, w window, until *time.Time) error {
	subj, err := child(a, nsAssertion, "Subject")
	if err != nil {
		return fail(ReasonMalformed, "several Subjects", err)
	}
	if subj == nil {
		return nil
	}
	for _, sc := range children(subj, nsAssertion, "SubjectConfirmation") {
		for _, d := range children(sc, nsAssertion, "SubjectConfirmationData") {
			if err := checkTimes(d, w, until); err != nil {
				return err
			}
		}
	}
	return nil
}
