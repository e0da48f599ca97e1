package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// spendTTL keeps a day's spend counter a day past its end.
const spendTTL = 48 * time.Hour

// Spend tracks each provider's spend per UTC day in the KV store (shared by
// every replica) and answers OverDailyBudget, on the hot path, from a local
// copy refreshed by Add and by Run every second: no I/O per request. It
// implements Budgets; a new UTC day starts at zero, so eligibility returns at
// midnight. The Add that takes a provider to its daily budget raises a
// BudgetThreshold event (OnBudget), once per provider and day fleet-wide.
type Spend struct {
	kv       SpendStore
	cfg      func() *Config
	log      *slog.Logger
	onBudget func(BudgetEvent)

	mu   sync.Mutex // serialises snapshot swaps
	snap atomic.Pointer[spendSnapshot]
}

// spendSnapshot is the known spend of one UTC day, in micro-USD per provider.
type spendSnapshot struct {
	day    string
	micros map[string]int64
}

// SpendStore is where Spend counts: store.Values' Get and store.Counters'
// IncrBy and Reserve, shared by every replica (memkv, rediskv).
type SpendStore interface {
	Get(ctx context.Context, key string) ([]byte, error)
	IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)
	Reserve(ctx context.Context, key string, amount, cap int64, ttl time.Duration) (ok bool, total int64, err error)
}

// NewSpend returns a tracker over kv whose budgets come from cfg (typically
// (*Live).Current).
func NewSpend(kv SpendStore, cfg func() *Config, log *slog.Logger) *Spend {
	if log == nil {
		log = slog.Default()
	}
	s := &Spend{kv: kv, cfg: cfg, log: log}
	s.onBudget = s.logBudget
	s.snap.Store(&spendSnapshot{})
	return s
}

// BudgetEvent says that a provider's spend reached its daily budget: a
// BudgetThreshold alert.
type BudgetEvent struct {
	Provider  string
	Day       string // the UTC day, YYYY-MM-DD
	BudgetUSD float64
	SpentUSD  float64
	// Level is the percentage of the budget reached: 80 (a warning) or
	// 100.
	Level int
}

// budgetLevels are the percentages of a budget whose first crossing in a
// day raises a BudgetEvent.
var budgetLevels = []int64{80, 100}

// OnBudget sets the hook called when a provider's spend first reaches its
// daily budget: once per provider and UTC day across every replica sharing
// the store, by the replica whose Add crossed it, on Add's goroutine (it must
// not block). Without it the event is logged at warn. Call it before the
// Spend is used; nil restores the log.
func (s *Spend) OnBudget(f func(BudgetEvent)) *Spend {
	if f == nil {
		f = s.logBudget
	}
	s.onBudget = f
	return s
}

// logBudget is the default budget hook.
func (s *Spend) logBudget(ev BudgetEvent) {
	s.log.Warn("BudgetThreshold", "alert", "BudgetThreshold", "provider", ev.Provider, "day", ev.Day,
		"budget_usd", ev.BudgetUSD, "spent_usd", ev.SpentUSD)
}

// alertKey marks that the budget event of a provider's day was raised.
func alertKey(provider, day string, level int64) string {
	if level == 100 {
		return spendKey(provider, day) + ":alerted"
	}
	return spendKey(provider, day) + ":alerted" + strconv.FormatInt(level, 10)
}

// crossed raises a budget event for each level of the provider's budget
// (80 % and 100 %) the day's spend went from below (before) to at or above
// (after), once per provider, day and level across replicas: the first
// replica to reserve the level's alert marker (a counter capped at 1)
// raises it.
func (s *Spend) crossed(ctx context.Context, provider, day string, before, after int64) {
	budget, ok := s.cfg().Budget(provider)
	if !ok || budget <= 0 {
		return
	}
	limit := int64(math.Round(budget * 1e6))
	for _, level := range budgetLevels {
		mark := limit * level / 100
		if before >= mark || after < mark {
			continue
		}
		first, _, err := s.kv.Reserve(ctx, alertKey(provider, day, level), 1, 1, spendTTL)
		if err != nil {
			s.log.Error("provider spend: could not record a budget event", "provider", provider, "err", err)
			return
		}
		if first {
			s.onBudget(BudgetEvent{Provider: provider, Day: day, BudgetUSD: budget, SpentUSD: float64(after) / 1e6, Level: int(level)})
		}
	}
}

func spendDay(now time.Time) string { return now.UTC().Format(time.DateOnly) }

func spendKey(provider, day string) string { return "route:spend:" + provider + ":" + day }

// Add counts usd spent on provider at now and returns the day's total.
func (s *Spend) Add(ctx context.Context, provider string, usd float64, now time.Time) (float64, error) {
	if !(usd >= 0) || usd > 1e9 {
		return 0, fmt.Errorf("route: spend of %v USD on %q: want a number from 0 to 1e9", usd, provider)
	}
	day := spendDay(now)
	delta := int64(math.Round(usd * 1e6))
	total, err := s.kv.IncrBy(ctx, spendKey(provider, day), delta, spendTTL)
	if err != nil {
		return 0, fmt.Errorf("route: count spend on %q: %w", provider, err)
	}
	s.record(day, map[string]int64{provider: total})
	s.crossed(ctx, provider, day, total-delta, total)
	return float64(total) / 1e6, nil
}

// Spent returns the spend on provider on the UTC day of now, from the store.
func (s *Spend) Spent(ctx context.Context, provider string, now time.Time) (float64, error) {
	us, err := s.read(ctx, provider, spendDay(now))
	return float64(us) / 1e6, err
}

func (s *Spend) read(ctx context.Context, provider, day string) (int64, error) {
	b, err := s.kv.Get(ctx, spendKey(provider, day))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("route: read spend on %q: %w", provider, err)
	}
	us, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("route: read spend on %q: %w", provider, err)
	}
	return us, nil
}

// record merges totals of day into the snapshot; totals only grow within a
// day, so the larger value wins.
func (s *Spend) record(day string, totals map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.snap.Load()
	next := &spendSnapshot{day: day, micros: map[string]int64{}}
	if cur.day == day {
		for p, v := range cur.micros {
			next.micros[p] = v
		}
	} else if cur.day > day {
		return // a late answer about an earlier day
	}
	for p, v := range totals {
		next.micros[p] = max(next.micros[p], v)
	}
	s.snap.Store(next)
}

// OverDailyBudget reports whether provider has a daily budget and has spent
// it on the UTC day of now, as last seen.
func (s *Spend) OverDailyBudget(provider string, now time.Time) bool {
	budget, ok := s.cfg().Budget(provider)
	if !ok || budget <= 0 {
		return false
	}
	snap := s.snap.Load()
	if snap.day != spendDay(now) {
		return false
	}
	return float64(snap.micros[provider]) >= budget*1e6
}

// Refresh reads the day's spend of every provider with a budget.
func (s *Spend) Refresh(ctx context.Context, now time.Time) error {
	day := spendDay(now)
	totals := map[string]int64{}
	var errs []error
	for _, b := range s.cfg().Budgets {
		us, err := s.read(ctx, b.Provider, day)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		totals[b.Provider] = us
	}
	s.record(day, totals)
	return errors.Join(errs...)
}

// Run refreshes every second until ctx ends, so spend counted by other
// replicas is seen within a second. It returns nil when ctx ends.
func (s *Spend) Run(ctx context.Context) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if err := s.Refresh(ctx, time.Now()); err != nil && ctx.Err() == nil {
			s.log.Warn("provider spend: refresh failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

var _ Budgets = (*Spend)(nil)
