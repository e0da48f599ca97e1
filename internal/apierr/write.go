package apierr

import (
	"encoding/json"
	"net/http"
)

type body struct {
	Error object `json:"error"`
}

type object struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    *string `json:"code"`
	Param   *string `json:"param"`
}

// JSON is the OpenAI-shaped body of err:
// {"error":{"message","type","code","param", …extra}}.
func JSON(err error) []byte {
	e := From(err)
	o := object{Message: e.Message, Type: e.Kind.Type()}
	if e.Code != "" {
		o.Code = &e.Code
	}
	if e.Param != "" {
		o.Param = &e.Param
	}
	var b []byte
	if len(e.Extra) == 0 {
		b, _ = json.Marshal(body{Error: o})
		return b
	}
	m := map[string]any{"message": o.Message, "type": o.Type, "code": o.Code, "param": o.Param}
	for k, v := range e.Extra {
		if _, taken := m[k]; !taken {
			m[k] = v
		}
	}
	b, _ = json.Marshal(map[string]any{"error": m})
	return b
}

// Write answers err on w with its status, headers and JSON body. It must be
// called before anything else was written to w.
func Write(w http.ResponseWriter, err error) {
	e := From(err)
	h := w.Header()
	e.SetHeaders(h)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(e.Status())
	_, _ = w.Write(JSON(e))
}
