package anthropic

import "time"

// FixedCreated is the "created" time of every chunk and completion in tests.
const FixedCreated = 1754500000

func init() { now = func() time.Time { return time.Unix(FixedCreated, 0) } }

// FastTextDelta exposes the stream's text-delta fast path to the fuzz test.
var FastTextDelta = fastTextDelta
