package access

// Following reports whether g's Run is subscribed to the change channel
// (tests only).
func Following(g *Grants) bool { return g.following.Load() }
