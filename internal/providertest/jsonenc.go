package providertest

import (
	"strconv"

	"github.com/svc-gateway/svc/internal/llm"
)

// The responses are built by appending to byte slices from pre-written
// fragments instead of marshalling structs: the benchmark drives tens of
// thousands of requests per second through this server.

func appendStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return llm.AppendJSONString(dst, s)
}

func appendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// modelCreated is the "created" time of every listed model.
const modelCreated = 1686935002

func appendModel(dst []byte, id string) []byte {
	dst = append(dst, `{"id":`...)
	dst = llm.AppendJSONString(dst, id)
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
