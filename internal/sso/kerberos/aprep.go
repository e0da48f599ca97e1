package kerberos

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
)

// tokIDAPRep is the GSS-API Kerberos token id of an AP-REP (RFC 4121
// section 4.1).
var tokIDAPRep = []byte{0x02, 0x00}

// acceptToken is the acceptor's answer to a verified initial token that
// asked for mutual authentication: the AP-REP in a Kerberos GSS-API token,
// inside an SPNEGO NegTokenResp (accept-completed, the client's mechanism)
// when the client used SPNEGO.
//
// gokrb5 decodes AP-REPs but cannot encode them (KRB5Token.Marshal refuses
// TOK_ID_KRB_AP_REP), so the AP-REP is encoded here with gokrb5's own
// types, ASN.1 codec and encryption.
func acceptToken(tok *initToken) ([]byte, error) {
	rep, err := apRep(&tok.apreq)
	if err != nil {
		return nil, err
	}
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, err
	}
	gss := asn1tools.AddASNAppTag(append(append(oid, tokIDAPRep...), rep...), 0)
	if !tok.spnego {
		return gss, nil
	}
	resp := spnego.NegTokenResp{
		NegState:      asn1.Enumerated(spnego.NegStateAcceptCompleted),
		SupportedMech: tok.mech,
		ResponseToken: gss,
	}
	return resp.Marshal()
}

// apRep encodes the KRB_AP_REP answering req (RFC 4120 section 5.5.2):
// the authenticator's time echoed, encrypted with the ticket's session key,
// with a fresh sequence number of ours.
func apRep(req *messages.APReq) ([]byte, error) {
	seq, err := sequenceNumber()
	if err != nil {
		return nil, err
	}
	part := messages.EncAPRepPart{
		CTime:          req.Authenticator.CTime.UTC(),
		Cusec:          req.Authenticator.Cusec,
		SequenceNumber: seq,
	}
	pb, err := asn1.Marshal(part)
	if err != nil {
		return nil, fmt.Errorf("encode EncAPRepPart: %w", err)
	}
	pb = asn1tools.AddASNAppTag(pb, asnAppTag.EncAPRepPart)
	enc, err := crypto.GetEncryptedData(pb, req.Ticket.DecryptedEncPart.Key, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, fmt.Errorf("encrypt EncAPRepPart: %w", err)
	}
	rep := messages.APRep{PVNO: iana.PVNO, MsgType: msgtype.KRB_AP_REP, EncPart: enc}
	b, err := asn1.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("encode AP-REP: %w", err)
	}
	return asn1tools.AddASNAppTag(b, asnAppTag.APREP), nil
}

// sequenceNumber is a random nonzero 30-bit initial sequence number, as
// MIT's acceptor picks (small enough for every implementation's decoder).
func sequenceNumber() (int64, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint32(b[:])&0x3fffffff) | 1, nil
}
