package kmstest

import "sync"

// requestLog keeps the requests a double answered, in arrival order; safe
// for concurrent use. Each double embeds one: its Requests and Count are
// the log's.
type requestLog struct {
	mu       sync.Mutex
	requests []Request
}

func (l *requestLog) record(r Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, r)
}

// Requests returns the requests answered so far, whatever their outcome.
// The double's doc says which Targets it answers.
func (l *requestLog) Requests() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.requests...)
}

// Count returns how many requests had target, whatever their outcome.
func (l *requestLog) Count(target string) int {
	n := 0
	for _, r := range l.Requests() {
		if r.Target == target {
			n++
		}
	}
	return n
}
