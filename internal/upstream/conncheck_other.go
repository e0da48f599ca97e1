//go:build !unix

package upstream

import "net"

// connAlive cannot peek at a socket here; a closed connection shows when the
// request is sent.
func connAlive(net.Conn) bool { return true }
