// Package sse owns Server-Sent Events framing: reading an event stream from
// an upstream provider and writing one to a client, as the WHATWG HTML
// specification ("Server-sent events", section 9.2) defines the format.
//
// It knows nothing of what the events carry: turning an event's Data into
// chunks, and chunks back into Data, is the job of the provider adapters and
// the proxy. Anyone may import it, provider adapters included; it imports
// only the standard library.
//
// Both directions sit on the proxy's hot path, so they are built for it:
//
//   - A [Reader] returns each event as soon as its terminating blank line has
//     been read, never waits for more input than that, never holds more than
//     one event in memory, refuses an event larger than its limit with
//     [ErrEventTooLarge], and does not allocate per event in steady state
//     (the returned Data aliases the Reader's buffer until the next call).
//   - A [Writer] frames an event into one reused buffer, writes it with a
//     single Write, and flushes, so that every event reaches the client as
//     it is written. [Writer.WriteData], the common case, does not allocate.
//
// Neither is safe for concurrent use; a stream has one reader and one writer.
package sse
