package cohere

// FuzzAppendString checks the hand-written JSON string encoder against
// encoding/json, byte for byte.
