package kerberos

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"

	"github.com/svc-gateway/svc/internal/apierr"
)

// initToken is a client's initial Negotiate token, decoded: the AP-REQ and
// how it was wrapped, which the answer token mirrors.
type initToken struct {
	apreq messages.APReq
	// spnego is true for an SPNEGO NegTokenInit, false for a bare Kerberos
	// GSS-API token (some clients send that under Negotiate).
	spnego bool
	// mech is the mechanism the client chose (SPNEGO only): the Kerberos
	// OID or Microsoft's legacy one, echoed as supportedMech.
	mech asn1.ObjectIdentifier
}

// decodeHeader returns the token bytes of the value after "Negotiate ".
func decodeHeader(header string) ([]byte, *apierr.Error) {
	s := strings.TrimSpace(header)
	if s == "" {
		return nil, fail(ReasonNoToken, "", nil)
	}
	if len(s) > base64.StdEncoding.EncodedLen(MaxTokenBytes) {
		return nil, fail(ReasonMalformed, fmt.Sprintf("the Negotiate token is larger than %d bytes", MaxTokenBytes), nil)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, fail(ReasonMalformed, "the Negotiate token is not base64", err)
	}
	if len(b) == 0 {
		return nil, fail(ReasonNoToken, "", nil)
	}
	return b, nil
}

// parseToken decodes an SPNEGO NegTokenInit or a bare Kerberos GSS-API
// token carrying an AP-REQ. gokrb5's decoders may panic on hostile input;
// a panic is a malformed token.
func parseToken(b []byte) (tok *initToken, aerr *apierr.Error) {
	defer func() {
		if r := recover(); r != nil {
			tok, aerr = nil, fail(ReasonMalformed, "", fmt.Errorf("decoder panic: %v", r))
		}
	}()
	var oid asn1.ObjectIdentifier
	if _, err := asn1.UnmarshalWithParams(b, &oid, "application,explicit,tag:0"); err != nil {
		if b[0] == 0xa1 {
			return nil, fail(ReasonMalformed, "a continuation (NegTokenResp) was sent where an initial token was expected", nil)
		}
		return nil, fail(ReasonMalformed, "", err)
	}
	switch {
	case oid.Equal(gssapi.OIDSPNEGO.OID()):
		return parseSPNEGO(b)
	case oid.Equal(gssapi.OIDKRB5.OID()):
		req, aerr := parseKRB5(b)
		if aerr != nil {
			return nil, aerr
		}
		return &initToken{apreq: req}, nil
	default:
		return nil, fail(ReasonUnsupportedMechanism, "", fmt.Errorf("GSS-API mechanism %s", oid))
	}
}

func parseSPNEGO(b []byte) (*initToken, *apierr.Error) {
	var st spnego.SPNEGOToken
	if err := st.Unmarshal(b); err != nil {
		return nil, fail(ReasonMalformed, "", err)
	}
	if !st.Init {
		return nil, fail(ReasonMalformed, "a continuation (NegTokenResp) was sent where an initial token was expected", nil)
	}
	nti := st.NegTokenInit
	if len(nti.MechTypes) == 0 {
		return nil, fail(ReasonMalformed, "the SPNEGO token lists no mechanism", nil)
	}
	mech := nti.MechTypes[0]
	if !isKerberos(mech) {
		return nil, fail(ReasonUnsupportedMechanism, "", fmt.Errorf("preferred mechanism %s", mech))
	}
	if len(nti.MechTokenBytes) == 0 {
		return nil, fail(ReasonMalformed, "the SPNEGO token carries no Kerberos token", nil)
	}
	req, aerr := parseKRB5(nti.MechTokenBytes)
	if aerr != nil {
		return nil, aerr
	}
	return &initToken{apreq: req, spnego: true, mech: mech}, nil
}

// parseKRB5 decodes a Kerberos GSS-API token, which must hold an AP-REQ.
func parseKRB5(b []byte) (messages.APReq, *apierr.Error) {
	var kt spnego.KRB5Token
	if err := kt.Unmarshal(b); err != nil {
		return messages.APReq{}, fail(ReasonMalformed, "", err)
	}
	if !kt.IsAPReq() {
		return messages.APReq{}, fail(ReasonMalformed, "the Kerberos token is not an AP-REQ", nil)
	}
	return kt.APReq, nil
}

func isKerberos(oid asn1.ObjectIdentifier) bool {
	return oid.Equal(gssapi.OIDKRB5.OID()) || oid.Equal(gssapi.OIDMSLegacyKRB5.OID())
}
