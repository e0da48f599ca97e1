package saml

import (
	"crypto/x509"
	"errors"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
	"github.com/russellhaering/goxmldsig/etreeutils"
)

// The allow-lists. Signatures are RSA over SHA-256 (SHA-384 and SHA-512,
// strictly stronger, are taken too); SHA-1 is refused everywhere, for the
// signature and for the digest: SHA-1 collisions are practical and every
// identity provider in use signs with SHA-256 by default. Canonicalization
// is one of the three W3C methods without comments (comments are refused in
// the document anyway).
var (
	allowedSignatureMethods = map[string]bool{
		dsig.RSASHA256SignatureMethod: true,
		dsig.RSASHA384SignatureMethod: true,
		dsig.RSASHA512SignatureMethod: true,
	}
	allowedDigestMethods = map[string]bool{
		"http://www.w3.org/2001/04/xmlenc#sha256":       true,
		"http://www.w3.org/2001/04/xmldsig-more#sha384": true,
		"http://www.w3.org/2001/04/xmlenc#sha512":       true,
	}
	allowedCanonicalizations = map[string]bool{
		string(dsig.CanonicalXML10ExclusiveAlgorithmId): true,
		string(dsig.CanonicalXML11AlgorithmId):          true,
		string(dsig.CanonicalXML10RecAlgorithmId):       true,
	}
)

// maxTransforms bounds a Reference's transforms (IdPs use two: enveloped
// signature, then canonicalization).
const maxTransforms = 4

// errUnsigned is an element without an enveloped signature of its own.
var errUnsigned = errors.New("not signed")

// checkAlgorithms checks the shape and the algorithms of every ds:Signature
// in the tree under root, before any is verified: one SignedInfo with one
// CanonicalizationMethod, one SignatureMethod and one Reference (the SAML
// profile's shape, so the library cannot pick another reference than the
// one checked), whose transforms and digest are allowed. A wrong shape is
// malformed; an algorithm outside the lists is refused as such.
func checkAlgorithms(root *etree.Element) error {
	var err error
	walk(root, func(el *etree.Element) bool {
		if is(el, dsig.Namespace, dsig.SignatureTag) {
			err = checkSignatureElement(el)
		}
		return err == nil
	})
	return err
}

// walk calls fn on every element under root, root first, depth first,
// until fn returns false.
func walk(root *etree.Element, fn func(*etree.Element) bool) {
	stack := []*etree.Element{root}
	for len(stack) > 0 {
		el := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !fn(el) {
			return
		}
		cs := el.ChildElements()
		for i := len(cs) - 1; i >= 0; i-- {
			stack = append(stack, cs[i])
		}
	}
}

func checkSignatureElement(sig *etree.Element) error {
	si, err := only(sig, dsig.SignedInfoTag)
	if err != nil {
		return err
	}
	if _, err := only(sig, dsig.SignatureValueTag); err != nil {
		return err
	}
	c14n, err := only(si, dsig.CanonicalizationMethodTag)
	if err != nil {
		return err
	}
	if !allowedCanonicalizations[algorithm(c14n)] {
		return fail(ReasonAlgorithm, "canonicalization method not allowed", nil)
	}
	method, err := only(si, dsig.SignatureMethodTag)
	if err != nil {
		return err
	}
	if !allowedSignatureMethods[algorithm(method)] {
		return fail(ReasonAlgorithm, "signature method not allowed (RSA with SHA-256, -384 or -512 only)", nil)
	}
	ref, err := only(si, dsig.ReferenceTag)
	if err != nil {
		return err
	}
	return checkReference(ref)
}

func checkReference(ref *etree.Element) error {
	digest, err := only(ref, dsig.DigestMethodTag)
	if err != nil {
		return err
	}
	if !allowedDigestMethods[algorithm(digest)] {
		return fail(ReasonAlgorithm, "digest method not allowed (SHA-256, -384 or -512 only)", nil)
	}
	tfs, err := child(ref, dsig.Namespace, dsig.TransformsTag)
	if err != nil {
		return fail(ReasonMalformed, "a signature reference with several Transforms", err)
	}
	if tfs == nil {
		return nil
	}
	list := children(tfs, dsig.Namespace, dsig.TransformTag)
	if len(list) > maxTransforms || len(list) != len(tfs.ChildElements()) {
		return fail(ReasonMalformed, "a signature reference with unexpected transforms", nil)
	}
	for _, tf := range list {
		a := algorithm(tf)
		if a != string(dsig.EnvelopedSignatureAltorithmId) && !allowedCanonicalizations[a] {
			return fail(ReasonAlgorithm, "transform not allowed", nil)
		}
	}
	return nil
}

// only returns el's one ds:tag child; none or several is malformed.
func only(el *etree.Element, tag string) (*etree.Element, error) {
	c, err := child(el, dsig.Namespace, tag)
	if err == nil && c == nil {
		err = errors.New("missing " + tag)
	}
	if err != nil {
		return nil, fail(ReasonMalformed, "a signature without the expected shape", err)
	}
	return c, nil
}

func algorithm(el *etree.Element) string { return el.SelectAttrValue(dsig.AlgorithmAttr, "") }

// signedAssertion returns the assertion as its verified signature covers
// it: the element goxmldsig rebuilt from the bytes it digested, never the
// element of the original document. root is the document element that
// locate accepted (an Assertion, or a Response with exactly one Assertion
// child). In a Response, a signed assertion is verified on its own
// (detached with its namespace context); an unsigned one is trusted only
// inside a Response whose signature verifies, and read from the verified
// Response. A Response's signature, when present, must verify even when
// the assertion is signed too.
func signedAssertion(root *etree.Element, certs []*x509.Certificate, now time.Time) (*etree.Element, error) {
	if is(root, nsAssertion, "Assertion") {
		return verifyEnveloped(root, certs, now)
	}
	assertion, err := child(root, nsAssertion, "Assertion")
	if err != nil || assertion == nil {
		return nil, fail(ReasonMalformed, "a Response must hold exactly one Assertion", err)
	}
	var fromResponse *etree.Element
	if hasSignature(root) {
		vr, err := verifyEnveloped(root, certs, now)
		if err != nil {
			return nil, err
		}
		if fromResponse, err = child(vr, nsAssertion, "Assertion"); err != nil || fromResponse == nil {
			return nil, fail(ReasonMalformed, "a Response must hold exactly one Assertion", err)
		}
	}
	if hasSignature(assertion) {
		nsCtx, err := etreeutils.NSBuildParentContext(assertion)
		if err != nil {
			return nil, fail(ReasonMalformed, "namespaces of the Assertion", err)
		}
		detached, err := etreeutils.NSDetatch(nsCtx, assertion)
		if err != nil {
			return nil, fail(ReasonMalformed, "namespaces of the Assertion", err)
		}
		return verifyEnveloped(detached, certs, now)
	}
	if fromResponse == nil {
		return nil, fail(ReasonSignature, "neither the Assertion nor the Response is signed", errUnsigned)
	}
	return fromResponse, nil
}

// signedReference returns the URI of sig's one Reference ("" when the
// shape is not the one checkAlgorithms requires).
func signedReference(sig *etree.Element) string {
	si, err := child(sig, dsig.Namespace, dsig.SignedInfoTag)
	if err != nil || si == nil {
		return ""
	}
	ref, err := child(si, dsig.Namespace, dsig.ReferenceTag)
	if err != nil || ref == nil {
		return ""
	}
	return ref.SelectAttrValue(dsig.URIAttr, "")
}

// hasSignature reports whether el has a ds:Signature child.
func hasSignature(el *etree.Element) bool {
	return len(children(el, dsig.Namespace, dsig.SignatureTag)) > 0
}

// verifyEnveloped verifies el's own enveloped signature (its one
// ds:Signature child, whose one Reference must name el's ID) against each
// trusted certificate in turn, and returns the verified element.
func verifyEnveloped(el *etree.Element, certs []*x509.Certificate, now time.Time) (*etree.Element, error) {
	sigs := children(el, dsig.Namespace, dsig.SignatureTag)
	switch {
	case len(sigs) == 0:
		return nil, fail(ReasonSignature, "the "+el.Tag+" is not signed", errUnsigned)
	case len(sigs) > 1:
		return nil, fail(ReasonMalformed, "the "+el.Tag+" has several signatures", nil)
	}
	id, err := elementID(el)
	if err != nil {
		return nil, fail(ReasonMalformed, "the "+el.Tag+" has no usable ID", err)
	}
	if signedReference(sigs[0]) != "#"+id {
		return nil, fail(ReasonSignature, "the signature does not reference the element it is in", nil)
	}
	if len(certs) == 0 {
		return nil, fail(ReasonSignature, "no identity provider certificate", nil)
	}
	var last error
	for _, cert := range certs {
		vc := &dsig.ValidationContext{
			CertificateStore: &dsig.MemoryX509CertificateStore{Roots: []*x509.Certificate{cert}},
			IdAttribute:      dsig.DefaultIdAttr,
			Clock:            dsig.NewFakeClockAt(now),
		}
		out, err := vc.Validate(el)
		if err == nil {
			if out == nil || out.Tag != el.Tag || out.NamespaceURI() != el.NamespaceURI() || out.SelectAttrValue("ID", "") != id {
				return nil, fail(ReasonSignature, "the verified element is not the one signed", nil)
			}
			return out, nil
		}
		last = err
	}
	return nil, fail(ReasonSignature, "the signature does not verify against the identity provider's certificate", last)
}
