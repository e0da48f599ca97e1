package providertest

import (
	"net/http"
	"strconv"

	"github.com/svc-gateway/svc/internal/llm"
)

// apiError is an OpenAI error: {"error":{"message","type","param","code"}}.
// Empty Param and Code are sent as null, as OpenAI does.
type apiError struct {
	Status  int
	Message string
	Type    string
	Param   string
	Code    string
}

// forcedError is the error a server answers for X-Fake-Status: status, worded
// as OpenAI words it.
func forcedError(status int, model string) apiError {
	e := apiError{Status: status}
	switch status {
	case http.StatusBadRequest:
		e.Message, e.Type = "Invalid request (providertest: X-Fake-Status 400).", "invalid_request_error"
	case http.StatusUnauthorized:
		e.Message, e.Type, e.Code = "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"
	case http.StatusForbidden:
		e.Message, e.Type, e.Code = "You are not allowed to sample from this model.", "invalid_request_error", "model_not_allowed"
	case http.StatusNotFound:
		e.Message, e.Type, e.Code = "The model `"+model+"` does not exist or you do not have access to it.", "invalid_request_error", "model_not_found"
	case http.StatusTooManyRequests:
		e.Message, e.Type, e.Code = "Rate limit reached for "+model+" in organization org-providertest on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s.", "requests", "rate_limit_exceeded"
	case http.StatusInternalServerError:
		e.Message, e.Type = "The server had an error while processing your request. Sorry about that!", "server_error"
	case http.StatusServiceUnavailable:
		e.Message, e.Type = "The engine is currently overloaded, please try again later.", "server_error"
	default:
		e.Message = "providertest: X-Fake-Status " + strconv.Itoa(status) + " (" + http.StatusText(status) + ")."
		e.Type = "invalid_request_error"
		if status >= 500 {
			e.Type = "server_error"
		}
	}
	return e
}

func invalidRequest(param, code, msg string) apiError {
	return apiError{Status: http.StatusBadRequest, Message: msg, Type: "invalid_request_error", Param: param, Code: code}
}

// appendErrorBody appends e's JSON body to dst.
func appendErrorBody(dst []byte, e apiError) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = llm.AppendJSONString(dst, e.Message)
	dst = append(dst, `,"type":`...)
	dst = llm.AppendJSONString(dst, e.Type)
	dst = append(dst, `,"param":`...)
	dst = appendStringOrNull(dst, e.Param)
	dst = append(dst, `,"code":`...)
	dst = appendStringOrNull(dst, e.Code)
	return append(dst, "}}\n"...)
}

// writeError answers e. It must be called before anything else was written.
func writeError(w http.ResponseWriter, e apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.Status == http.StatusTooManyRequests {
		h.Set("Retry-After", "1")
		h.Set("X-Ratelimit-Limit-Requests", "3")
		h.Set("X-Ratelimit-Remaining-Requests", "0")
		h.Set("X-Ratelimit-Reset-Requests", "1s")
	}
	body := appendErrorBody(make([]byte, 0, 256), e)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

func (s *OpenAI) notFound(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()
	writeError(w, apiError{
		Status:  http.StatusNotFound,
		Message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")",
		Type:    "invalid_request_error",
	})
}
