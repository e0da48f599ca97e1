package saml

import (
	"bytes"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"
	rtvalidator "github.com/mattermost/xml-roundtrip-validator"
)

// maxDepth bounds the nesting of the document: a SAML Response nests its
// attribute values six deep, its signature's transforms seven.
const maxDepth = 24

// maxIDLen bounds an ID attribute (an xs:ID; IdPs use 20 to 50 characters).
const maxIDLen = 256

// idPattern is xs:ID restricted to ASCII NCName characters, which every
// identity provider's generator stays within.
var idPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// decodeValue turns the X-SAML-Assertion value into XML: standard base64,
// padded or not; line breaks and spaces (line-wrapped base64) are ignored;
// the URL-safe alphabet is taken too. The decoded document is at most
// maxBytes long, which is checked before decoding.
func decodeValue(value string, maxBytes int) ([]byte, error) {
	limit := base64.StdEncoding.EncodedLen(maxBytes)
	if len(value) > 2*limit {
		return nil, errors.New("value longer than the bound")
	}
	s := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, value)
	if s == "" {
		return nil, errors.New("empty value")
	}
	if len(s) > limit {
		return nil, errors.New("value longer than the bound")
	}
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(s, "=") && len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	raw, err := enc.Strict().DecodeString(s)
	if err != nil {
		return nil, errors.New("not base64")
	}
	if len(raw) > maxBytes {
		return nil, errors.New("decoded document longer than the bound")
	}
	return raw, nil
}

// parseDocument parses raw as one XML document and refuses what a SAML
// identity provider never sends and attacks use: invalid UTF-8, more
// markup than maxElements elements could need, nesting deeper than
// maxDepth, constructs that do not survive a round trip through Go's
// encoding/xml (mattermost/xml-roundtrip-validator, as gosaml2 does), a
// DOCTYPE or other directive, processing instructions other than the XML
// declaration, comments anywhere (a comment inside NameID splits its text:
// the signature covers the text without it while a naive reader stops at
// it), undeclared element prefixes, duplicate attributes and duplicate ID
// attributes (which make a Reference ambiguous). It returns the root.
func parseDocument(raw []byte, maxElements int) (*etree.Element, error) {
	if !utf8.Valid(raw) {
		return nil, errors.New("not UTF-8")
	}
	if bytes.Count(raw, []byte("<")) > 2*maxElements+16 {
		return nil, errors.New("too much markup")
	}
	if err := rtvalidator.Validate(bytes.NewReader(raw)); err != nil {
		return nil, errors.New("XML that does not round-trip")
	}
	doc := etree.NewDocument()
	doc.ReadSettings = etree.ReadSettings{PreserveDuplicateAttrs: true, MaxDepth: maxDepth}
	if err := doc.ReadFromBytes(raw); err != nil {
		return nil, errors.New("not well-formed XML")
	}
	if err := checkProlog(doc); err != nil {
		return nil, err
	}
	root := doc.Root()
	if root == nil {
		return nil, errors.New("no document element")
	}
	if err := checkTree(root, maxElements); err != nil {
		return nil, err
	}
	return root, nil
}

// checkProlog allows, around the document element, only the XML
// declaration and whitespace.
func checkProlog(doc *etree.Document) error {
	for _, tok := range doc.Child {
		switch t := tok.(type) {
		case *etree.Element:
		case *etree.CharData:
			if strings.TrimSpace(t.Data) != "" {
				return errors.New("text outside the document element")
			}
		case *etree.ProcInst:
			if t.Target != "xml" {
				return errors.New("a processing instruction")
			}
		case *etree.Comment:
			return errors.New("a comment")
		default:
			return errors.New("a directive")
		}
	}
	return nil
}

// checkTree walks the tree under root, without recursion, applying
// parseDocument's element rules.
func checkTree(root *etree.Element, maxElements int) error {
	ids := map[string]bool{}
	stack := []*etree.Element{root}
	for n := 0; len(stack) > 0; n++ {
		if n >= maxElements {
			return errors.New("too many elements")
		}
		el := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := checkElement(el, ids); err != nil {
			return err
		}
		for _, tok := range el.Child {
			switch t := tok.(type) {
			case *etree.Element:
				stack = append(stack, t)
			case *etree.CharData:
			case *etree.Comment:
				return errors.New("a comment")
			case *etree.ProcInst:
				return errors.New("a processing instruction")
			default:
				return errors.New("a directive")
			}
		}
	}
	return nil
}

// checkElement checks one element's prefix and attributes, recording its ID.
func checkElement(el *etree.Element, ids map[string]bool) error {
	if el.Space != "" && el.NamespaceURI() == "" {
		return errors.New("an undeclared namespace prefix")
	}
	seen := make(map[string]bool, len(el.Attr))
	for _, a := range el.Attr {
		k := a.FullKey()
		if seen[k] {
			return errors.New("a duplicate attribute")
		}
		seen[k] = true
		if a.Space == "" && a.Key == "ID" {
			if ids[a.Value] {
				return errors.New("a duplicate ID")
			}
			ids[a.Value] = true
		}
	}
	return nil
}

// elementID returns el's ID attribute, which must be present and an xs:ID.
func elementID(el *etree.Element) (string, error) {
	id := el.SelectAttrValue("ID", "")
	if id == "" {
		return "", errors.New("no ID")
	}
	if len(id) > maxIDLen || !idPattern.MatchString(id) {
		return "", errors.New("an ID that is not an xs:ID")
	}
	return id, nil
}

// is reports whether el is the element {ns}tag.
func is(el *etree.Element, ns, tag string) bool {
	return el.Tag == tag && el.NamespaceURI() == ns
}

// children returns el's child elements named {ns}tag.
func children(el *etree.Element, ns, tag string) []*etree.Element {
	var out []*etree.Element
	for _, c := range el.ChildElements() {
		if is(c, ns, tag) {
			out = append(out, c)
		}
	}
	return out
}

// child returns el's only child element {ns}tag: nil when there is none, an
// error when there are several.
func child(el *etree.Element, ns, tag string) (*etree.Element, error) {
	cs := children(el, ns, tag)
	switch len(cs) {
	case 0:
		return nil, nil
	case 1:
		return cs[0], nil
	}
	return nil, errors.New("more than one " + tag)
}

// text returns el's character data, which must not be interleaved with
// child elements (a value in SAML is text only).
func text(el *etree.Element) (string, bool) {
	var b strings.Builder
	for _, tok := range el.Child {
		switch t := tok.(type) {
		case *etree.CharData:
			b.WriteString(t.Data)
		case *etree.Element:
			return "", false
		}
	}
	return b.String(), true
}

// countAll counts the elements {ns}tag in the tree under root, root included.
func countAll(root *etree.Element, ns, tag string) int {
	n := 0
	stack := []*etree.Element{root}
	for len(stack) > 0 {
		el := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if is(el, ns, tag) {
			n++
		}
		stack = append(stack, el.ChildElements()...)
	}
	return n
}
