// Package llm holds svc's canonical, OpenAI-shaped types: chat requests and
// responses, stream chunks, usage and tools, plus the Stream interface through
// which every streamed answer flows. Provider adapters translate to and from
// these types; the pipeline and the HTTP surfaces speak only these.
//
// Anyone may import llm. It imports only the standard library and llm/sse.
package llm
