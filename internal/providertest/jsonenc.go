package providertest

import (
	"strconv"
	"unicode/utf8"
)

// The responses are built by appending to byte slices from pre-written
// fragments instead of marshalling structs: the benchmark drives tens of
// thousands of requests per second through this server.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json escapes
// it apart from HTML characters, which need no escaping here.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, s)
}

func appendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// modelCreated is the "created" time of every listed model.
const modelCreated = 1686935002

func appendModel(dst []byte, id string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, id)
	dst = append(dst, `,"object":"model","created":`...)
	dst = appendInt(dst, modelCreated)
	return append(dst, `,"owned_by":"system"}`...)
}

// appendModelList appends the GET /v1/models answer listing ids.
func appendModelList(dst []byte, ids []string) []byte {
	dst = append(dst, `{"object":"list","data":[`...)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendModel(dst, id)
	}
	return append(dst, "]}\n"...)
}
