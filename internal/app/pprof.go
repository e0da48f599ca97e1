package app

import (
	"net/http"
	"net/http/pprof"
)

// PprofHandler serves net/http/pprof's profiles. Mount it only on a loopback
// listener (SVC_PPROF_ADDR): profiles reveal the process's internals.
func PprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
