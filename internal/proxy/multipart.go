package proxy

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// maxFormValue bounds a non-file form field.
const maxFormValue = 64 << 10

func decodeTranscription(x *pipeline.Exchange) error {
	model, hasFile, err := readForm(x.Body, x.Inbound.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	if !hasFile {
		return apierr.BadParam("file", "file is required")
	}
	if err := requireModel(model); err != nil {
		return err
	}
	x.Model = model
	return nil
}

// readForm reads the model field and whether a file part exists.
func readForm(body []byte, contentType string) (model string, hasFile bool, err error) {
	mr, err := formReader(body, contentType)
	if err != nil {
		return "", false, err
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return model, hasFile, nil
		}
		if err != nil {
			return "", false, apierr.Wrap(apierr.InvalidRequest, "invalid_multipart", "the multipart body is malformed", err)
		}
		switch part.FormName() {
		case "model":
			b, err := io.ReadAll(io.LimitReader(part, maxFormValue))
			if err != nil {
				return "", false, apierr.Wrap(apierr.InvalidRequest, "invalid_multipart", "the multipart body is malformed", err)
			}
			model = strings.TrimSpace(string(b))
		case "file":
			hasFile = true
		}
		part.Close()
	}
}

func formReader(body []byte, contentType string) (*multipart.Reader, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, apierr.New(apierr.InvalidRequest, "invalid_content_type", "the body must be multipart/form-data with a boundary")
	}
	return multipart.NewReader(bytes.NewReader(body), params["boundary"]), nil
}

// rewriteFormModel re-encodes the form with the model field set to model
// (the provider prefix stripped); every other part is copied as it is.
func rewriteFormModel(body []byte, contentType, model string) ([]byte, string, error) {
	mr, err := formReader(body, contentType)
	if err != nil {
		return nil, "", err
	}
	var out bytes.Buffer
	out.Grow(len(body) + 64)
	mw := multipart.NewWriter(&out)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, "", apierr.Wrap(apierr.InvalidRequest, "invalid_multipart", "the multipart body is malformed", err)
		}
		if part.FormName() == "model" {
			if err := mw.WriteField("model", model); err != nil {
				return nil, "", err
			}
			continue
		}
		w, err := mw.CreatePart(part.Header)
		if err != nil {
			return nil, "", err
		}
		if _, err := io.Copy(w, part); err != nil {
			return nil, "", apierr.Wrap(apierr.InvalidRequest, "invalid_multipart", "the multipart body is malformed", err)
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return out.Bytes(), mw.FormDataContentType(), nil
}
