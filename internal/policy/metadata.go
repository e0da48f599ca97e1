package policy

import (
	"encoding/json"
	"fmt"
)

// metadataKeys are the targeting keys Metadata reads; every other key is
// kept in Extra.
var metadataKeys = [...]string{"source_ips", "ad_groups", "departments", "applications"}

func (m *Metadata) lists() [4]*[]string {
	return [4]*[]string{&m.SourceIPs, &m.ADGroups, &m.Departments, &m.Applications}
}

// MarshalJSON writes the targeting lists that are set and the Extra keys
// as they came (a targeting key in Extra is not written twice).
func (m Metadata) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(m.Extra)+len(metadataKeys))
	for k, v := range m.Extra {
		out[k] = v
	}
	for i, l := range m.lists() {
		delete(out, metadataKeys[i])
		if len(*l) > 0 {
			out[metadataKeys[i]] = *l
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a JSON object: the targeting keys as lists of
// strings (null is an empty list), every other key into Extra.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("metadata must be a JSON object: %w", err)
	}
	*m = Metadata{}
	for i, l := range m.lists() {
		v, ok := raw[metadataKeys[i]]
		if !ok {
			continue
		}
		delete(raw, metadataKeys[i])
		if err := json.Unmarshal(v, l); err != nil {
			return fmt.Errorf("metadata.%s must be a list of strings", metadataKeys[i])
		}
	}
	if len(raw) == 0 {
		return nil
	}
	m.Extra = make(map[string]any, len(raw))
	for k, v := range raw {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return fmt.Errorf("metadata.%s: %w", k, err)
		}
		m.Extra[k] = x
	}
	return nil
}
