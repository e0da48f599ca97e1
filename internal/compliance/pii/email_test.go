package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func TestEmail(t *testing.T) {
	runTable(t, detect.Email, []tcase{
		{"plain", "write to bob@example.com.", []string{"bob@example.com"}},
		{"tag and subdomain", "anna.weber+billing@mail.example.co.uk", []string{"anna.weber+billing@mail.example.co.uk"}},
		{"angle brackets", "John <john_doe@example.org>", []string{"john_doe@example.org"}},
		{"mailto", "mailto:Info@Example.COM", []string{"Info@Example.COM"}},
		{"apostrophe", "o'brien@example.ie", []string{"o'brien@example.ie"}},
		{"utf-8 local part", "anna.müller@example.de", []string{"anna.müller@example.de"}},
		{"quoted", `"bob@example.com"`, []string{"bob@example.com"}},
		{"after utf-8 dash", "contact—bob@example.com", []string{"bob@example.com"}},
		{"punycode tld", "x@example.xn--p1ai", []string{"x@example.xn--p1ai"}},
		{"two", "a@b.io, c@d.io", []string{"a@b.io", "c@d.io"}},

		{"npm scope", "npm install @scope/package@1.2.3", nil},
		{"npm in sentence", "Which version of @prisma/client@14.3.4 supports ESM?", nil},
		{"retina asset", "icon@2x.png and logo@3x.jpg", nil},
		{"no dot", "root@localhost", nil},
		{"git ssh", "git clone git@github.com:org/repo.git", nil},
		{"url credentials", "postgres://app:s3cret@db.example.com:5432/x", nil},
		{"numeric tld", "user@10.0.0.1", nil},
		{"mention", "thanks @alice!", nil},
		{"empty local", "@example.com", nil},
		{"dot before at", "john.@example.com", nil},
		{"dash label", "a@-example.com", nil},
	})
}
