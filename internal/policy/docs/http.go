package docs

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/store"
)

// multipartOverhead is what a multipart body may hold beside the file
// (boundaries, part headers, small fields).
const multipartOverhead = 1 << 20

// Handler serves the document routes of the policy library:
//
//	POST /api/policies/generate-from-document   multipart field "file" → 202 {success, job_id, message, job}
//	GET  /api/documents/job/{job_id}/progress   → {success, job}
//	GET  /api/documents/job/{job_id}/results    → the Results; 409 until completed
//
// A file over maxBytes (MaxDocumentBytes if ≤ 0) answers 413 without being
// read whole; a type other than PDF, DOCX or UTF-8 text 415; a malformed
// multipart body 400; an unknown job 404. Errors are OpenAI-shaped
// (apierr). Authentication is the caller's to wrap around it.
func Handler(jobs *Jobs, maxBytes int64) http.Handler {
	if maxBytes <= 0 {
		maxBytes = MaxDocumentBytes
	}
	h := &handler{jobs: jobs, max: maxBytes}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/policies/generate-from-document", h.generate)
	mux.HandleFunc("GET /api/documents/job/{job_id}/progress", h.progress)
	mux.HandleFunc("GET /api/documents/job/{job_id}/results", h.results)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apierr.Write(w, apierr.Newf(apierr.NotFound, "route_not_found", "no route for %s %s", r.Method, r.URL.Path))
	})
	return mux
}

type handler struct {
	jobs *Jobs
	max  int64
}

func (h *handler) tooLarge() *apierr.Error {
	return apierr.Newf(apierr.TooLarge, "file_too_large", "the file is larger than %d MB", h.max>>20)
}

func (h *handler) generate(w http.ResponseWriter, r *http.Request) {
	limit := h.max + multipartOverhead
	if r.ContentLength > limit {
		apierr.Write(w, h.tooLarge())
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	mr, err := r.MultipartReader()
	if err != nil {
		apierr.Write(w, apierr.Wrap(apierr.InvalidRequest, "invalid_multipart", "the body must be multipart/form-data with a field \"file\"", err))
		return
	}
	filename, data, err := h.readFile(mr, r.ContentLength)
	if err != nil {
		apierr.Write(w, err)
		return
	}
	job, err := h.jobs.Submit(r.Context(), filename, data)
	switch {
	case errors.Is(err, ErrUnsupportedType):
		apierr.Write(w, apierr.Wrap(apierr.UnsupportedMedia, "unsupported_media_type",
			"unsupported file type: send a PDF, a DOCX or a UTF-8 text file", err))
		return
	case errors.Is(err, ErrEmpty):
		apierr.Write(w, apierr.BadParam("file", "the file is empty"))
		return
	case errors.Is(err, ErrDocumentTooLarge):
		apierr.Write(w, h.tooLarge())
		return
	case err != nil:
		apierr.Write(w, err)
		return
	}
	_ = jsonbody.Write(w, http.StatusAccepted, map[string]any{
		"success": true,
		"job_id":  job.ID,
		"message": "document accepted; follow /api/documents/job/" + job.ID + "/progress",
		"job":     job,
	})
}

// readFile reads the part named "file", at most h.max bytes of it; other
// parts are skipped (within the body limit).
func (h *handler) readFile(mr *multipart.Reader, contentLength int64) (string, []byte, error) {
	bodyErr := func(err error) error {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return h.tooLarge()
		}
		return apierr.Wrap(apierr.InvalidRequest, "invalid_multipart", "malformed multipart body", err)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return "", nil, apierr.BadParam("file", "the multipart field \"file\" is missing")
		}
		if err != nil {
			return "", nil, bodyErr(err)
		}
		if part.FormName() != "file" {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return "", nil, bodyErr(err)
			}
			continue
		}
		var buf bytes.Buffer
		if contentLength > 0 {
			buf.Grow(int(min(contentLength, h.max+1)))
		}
		n, err := io.Copy(&buf, io.LimitReader(part, h.max+1))
		if err != nil {
			return "", nil, bodyErr(err)
		}
		if n > h.max {
			return "", nil, h.tooLarge()
		}
		return part.FileName(), buf.Bytes(), nil
	}
}

func (h *handler) job(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("job_id")
	if id == "" || len(id) > 64 {
		apierr.Write(w, apierr.New(apierr.NotFound, "job_not_found", "no such document job"))
		return "", false
	}
	return id, true
}

func notFoundOr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.New(apierr.NotFound, "job_not_found", "no such document job")
	}
	return err
}

func (h *handler) progress(w http.ResponseWriter, r *http.Request) {
	id, ok := h.job(w, r)
	if !ok {
		return
	}
	job, err := h.jobs.Get(r.Context(), id)
	if err != nil {
		apierr.Write(w, notFoundOr(err))
		return
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"success": true, "job": job})
}

func (h *handler) results(w http.ResponseWriter, r *http.Request) {
	id, ok := h.job(w, r)
	if !ok {
		return
	}
	res, err := h.jobs.Results(r.Context(), id)
	var nr *NotReadyError
	switch {
	case errors.As(err, &nr):
		msg := "the job is " + nr.Status + "; results are available once it is completed"
		if nr.Reason != "" {
			msg = "the job failed: " + nr.Reason
		}
		e := apierr.New(apierr.Conflict, "job_not_completed", msg)
		e.Extra = map[string]any{"status": nr.Status}
		apierr.Write(w, e)
		return
	case err != nil:
		apierr.Write(w, notFoundOr(err))
		return
	}
	_ = jsonbody.Write(w, http.StatusOK, res)
}
