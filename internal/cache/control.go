package cache

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Request headers that steer the cache (the spec's table).
const (
	HeaderCache          = "X-Svc-Cache"           // no-cache | no-store | bypass
	HeaderNoCache        = "X-Svc-No-Cache"        // 1: alias of no-cache
	HeaderCacheTTL       = "X-Svc-Cache-Ttl"       // seconds
	HeaderCacheNamespace = "X-Svc-Cache-Namespace" // partition
)

// Response headers of the cache.
const (
	HeaderCacheHit    = "X-Svc-Cache-Hit"
	HeaderCacheKey    = "X-Svc-Cache-Key"
	HeaderSimilarity  = "X-Cache-Similarity"
	HeaderTokensSaved = "X-Tokens-Saved"
)

// MaxTTL bounds a per-response time-to-live (x-svc-cache-ttl).
const MaxTTL = 7 * 24 * time.Hour

// maxNamespace bounds the length of a namespace name.
const maxNamespace = 128

// directives are what one request's headers ask of the cache.
type directives struct {
	read, write bool
	ttl         time.Duration // 0: the default
	namespace   string        // "" : the default namespace
}

// parseDirectives reads the cache-control headers of h. Unknown values of
// x-svc-cache and malformed ttl or namespace values are the caller's mistake
// (400): a misspelt "no-store" must not silently store.
func parseDirectives(h http.Header) (directives, error) {
	d := directives{read: true, write: true}
	for _, v := range h.Values("Cache-Control") {
		for _, tok := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(tok)) {
			case "no-cache":
				d.read = false
			case "no-store":
				d.write = false
			}
		}
	}
	for _, v := range h.Values(HeaderCache) {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "no-cache":
			d.read = false
		case "no-store":
			d.write = false
		case "bypass":
			d.read, d.write = false, false
		case "", "default":
		default:
			return d, apierr.Newf(apierr.InvalidRequest, "invalid_cache_header",
				"%s must be no-cache, no-store or bypass, not %q", strings.ToLower(HeaderCache), v)
		}
	}
	if v := h.Get(HeaderNoCache); v != "" {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "true", "yes":
			d.read = false
		case "0", "false", "no":
		default:
			return d, apierr.Newf(apierr.InvalidRequest, "invalid_cache_header", "%s must be 1 or 0, not %q", strings.ToLower(HeaderNoCache), v)
		}
	}
	if v := h.Get(HeaderCacheTTL); v != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 || time.Duration(n)*time.Second > MaxTTL {
			return d, apierr.Newf(apierr.InvalidRequest, "invalid_cache_header",
				"%s must be a whole number of seconds between 1 and %d, not %q", strings.ToLower(HeaderCacheTTL), int64(MaxTTL/time.Second), v)
		}
		d.ttl = time.Duration(n) * time.Second
	}
	if v := h.Get(HeaderCacheNamespace); v != "" {
		if !validNamespace(v) {
			return d, apierr.Newf(apierr.InvalidRequest, "invalid_cache_header",
				"%s must be 1–%d characters of letters, digits, '.', '_', '-' or ':'", strings.ToLower(HeaderCacheNamespace), maxNamespace)
		}
		d.namespace = nsName(v)
	}
	return d, nil
}

// validNamespace: 1–128 characters of [A-Za-z0-9._:-].
func validNamespace(ns string) bool {
	if ns == "" || len(ns) > maxNamespace {
		return false
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-', c == ':':
		default:
			return false
		}
	}
	return true
}

// ValidNamespace reports whether ns can name a cache namespace.
func ValidNamespace(ns string) bool { return validNamespace(ns) }
