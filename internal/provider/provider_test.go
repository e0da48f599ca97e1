package provider_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/provider"
)

// TestAddToolCall checks pieces are assembled as OpenAI clients assemble
// tool call deltas: per choice and index, the first id kept, names and
// arguments concatenated, calls in the order they began.
func TestAddToolCall(t *testing.T) {
	var si provider.StreamInfo
	si.AddToolCall(0, 0, "call_a", "get_", "")
	si.AddToolCall(1, 0, "call_b", "search", `{"q":`)
	si.AddToolCall(0, 0, "", "weather", `{"city":`)
	si.AddToolCall(0, 1, "call_c", "noop", "{}")
	si.AddToolCall(0, 0, "call_ignored", "", `"Paris"}`)
	si.AddToolCall(1, 0, "", "", `"go"}`)
	want := []provider.ToolCall{
		{Choice: 0, Index: 0, ID: "call_a", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)},
		{Choice: 1, Index: 0, ID: "call_b", Name: "search", Arguments: []byte(`{"q":"go"}`)},
		{Choice: 0, Index: 1, ID: "call_c", Name: "noop", Arguments: []byte(`{}`)},
	}
	if diff := cmp.Diff(want, si.ToolCalls); diff != "" {
		t.Errorf("ToolCalls (-want +got):\n%s", diff)
	}
}
