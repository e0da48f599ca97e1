package jsonbody

import (
	"net/url"
	"strconv"

	"github.com/svc-gateway/svc/internal/apierr"
)

// QueryInt reads the optional integer query parameter name of q, def when
// it is absent; outside [lo, hi] or not an integer it is a 400 naming it.
func QueryInt(q url.Values, name string, def, lo, hi int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, apierr.BadParam(name, "%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}
