package egress

import (
	"errors"
	"testing"
)

// TestControl: the socket-level check refuses what the resolution check
// would, so a dial that bypassed it still cannot reach an internal address.
func TestControl(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:4700:4700::1111]:443", true},
		{"127.0.0.1:80", false},
		{"[::1]:80", false},
		{"[::ffff:169.254.169.254]:80", false},
		{"localhost:80", false},
	} {
		err := Policy{}.control("tcp", tt.addr, nil)
		if tt.want && err != nil {
			t.Errorf("control(%s) = %v, want nil", tt.addr, err)
		}
		if !tt.want && !errors.Is(err, ErrForbidden) {
			t.Errorf("control(%s) = %v, want ErrForbidden", tt.addr, err)
		}
	}
}
