package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// maxProfileSeconds bounds the CPU profile of svc that -cpuprofile-svc takes.
const maxProfileSeconds = 20

// probePprof checks that svc answers on its pprof listener (SVC_PPROF_ADDR).
func probePprof(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /debug/pprof/: status %d", resp.StatusCode)
	}
	return nil
}

// profileSeconds is the length of a profile that fits a phase expected to
// last d: whole seconds, 1 to maxProfileSeconds.
func profileSeconds(d time.Duration) int {
	return min(max(int(d/time.Second), 1), maxProfileSeconds)
}

// fetchProfile starts taking a secs-long CPU profile of svc into w and
// returns a function that waits for it.
func fetchProfile(ctx context.Context, addr string, secs int, w io.Writer) (wait func() error) {
	errc := make(chan error, 1)
	go func() {
		errc <- func() error {
			ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+30*time.Second)
			defer cancel()
			u := "http://" + addr + "/debug/pprof/profile?seconds=" + strconv.Itoa(secs)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
				return fmt.Errorf("GET %s: status %d: %s", u, resp.StatusCode, b)
			}
			_, err = io.Copy(w, resp.Body)
			return err
		}()
	}()
	return func() error { return <-errc }
}
