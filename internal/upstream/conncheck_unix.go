//go:build unix

package upstream

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// connAlive reports whether an idle pooled connection is still open: the
// peer has neither closed it nor sent anything unasked. It peeks at the
// socket without blocking, so that a request is not written to a connection
// the provider already closed (net/http's readLoop notices that in the
// background; a POST written there could not be sent again safely).
func connAlive(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := true
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK):
			// Nothing to read: open and quiet.
		case rerr != nil, n == 0, n > 0:
			// An error, the peer's FIN, or bytes nobody asked for.
			alive = false
		}
		return true
	})
	return err == nil && alive
}
