package providertest

import (
	"encoding/json"
	"sync"
)

// storedResponse is a Responses API response the server keeps for
// previous_response_id, GET /v1/responses/{id} and its input items.
type storedResponse struct {
	body  []byte            // the response object as GET answers it, without a newline
	input []json.RawMessage // its input items with their ids, in request order
	conv  int               // text bytes of the conversation through it: history, input and output
	call  string            // the call_id of its function_call output, which the next turn must answer; or ""
}

// responseStore keeps the newest stored responses, up to a limit.
type responseStore struct {
	mu    sync.Mutex
	byID  map[string]*storedResponse
	order []string // ids oldest first; deleted ones linger until compacted
}

func (st *responseStore) get(id string) *storedResponse {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.byID[id]
}

// put keeps r under id, dropping the oldest responses beyond limit.
func (st *responseStore) put(id string, r *storedResponse, limit int) {
	if limit <= 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byID == nil {
		st.byID = make(map[string]*storedResponse)
	}
	st.byID[id] = r
	st.order = append(st.order, id)
	for len(st.byID) > limit && len(st.order) > 0 {
		delete(st.byID, st.order[0])
		st.order = st.order[1:]
	}
	if len(st.order) > 2*len(st.byID)+64 {
		kept := make([]string, 0, len(st.byID))
		for _, id := range st.order {
			if _, ok := st.byID[id]; ok {
				kept = append(kept, id)
			}
		}
		st.order = kept
	}
}

// remove forgets id and reports whether it was kept.
func (st *responseStore) remove(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	_, ok := st.byID[id]
	delete(st.byID, id)
	return ok
}

// StoredResponses is the number of Responses API responses the server keeps.
func (s *OpenAI) StoredResponses() int {
	s.stored.mu.Lock()
	defer s.stored.mu.Unlock()
	return len(s.stored.byID)
}
