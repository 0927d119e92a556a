package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestMarkdownShowsRepeatedFirstDeploys(t *testing.T) {
	r := &report{Sizes: []int{1000}, Tools: []string{toolKapp, toolOurs}, Versions: map[string]string{}}
	r.addRepeat(1000, firstPair{Kapp: measurement{Wall: 10 * time.Second}, Ours: measurement{Wall: 4 * time.Second}})
	r.addRepeat(1000, firstPair{Kapp: measurement{Wall: 10 * time.Second}, Ours: measurement{Wall: 6 * time.Second}})
	r.addRepeat(1000, firstPair{Kapp: measurement{Wall: 10 * time.Second}, Ours: measurement{Wall: 5 * time.Second, Err: io.ErrUnexpectedEOF}})
	md := r.Markdown()
	for _, want := range []string{
		"### First deploy, repeated",
		"(--repeat-first 3)",
		"| 1 | 10.0 s | 4.0 s | – | – | 0.40× | yes | – | – |",
		"| 2 | 10.0 s | 6.0 s | – | – | 0.60× | no | – | – |",
		"| 3 | 10.0 s | failed (5.0 s) | – | – | – | no | – | – |",
		"1 of 3 under 0.5× kapp.",
		// Three runs are too few to meet five out of five, but enough to miss it.
		"| first deploy of 1,000 ≤ 0.5× kapp in 5 runs out of 5 (--repeat-first) | 1 of 3 (0.40, 0.60, failed) | no |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// The bare creates' columns (created, and rolled out), and the medians
// against kapp and against the bare creates, each a target of five runs.
func TestMarkdownShowsBareCreates(t *testing.T) {
	r := &report{Sizes: []int{1000}, Versions: map[string]string{}}
	for _, ours := range []time.Duration{3, 4, 5, 4, 6} {
		r.addRepeat(1000, firstPair{Kapp: measurement{Wall: 10 * time.Second}, Ours: measurement{Wall: ours * time.Second}, Bare: measurement{Wall: 4 * time.Second, RolledOut: 5 * time.Second}})
	}
	md := r.Markdown()
	for _, want := range []string{
		"| 1 | 10.0 s | 3.0 s | 4.0 s | 5.0 s | 0.30× | yes | 0.75× | 0.60× |",
		"| 5 | 10.0 s | 6.0 s | 4.0 s | 5.0 s | 0.60× | no | 1.50× | 1.20× |",
		"4 of 5 under 0.5× kapp. Median ours/kapp 0.40×. Median ours/bare creates 1.00×. Median ours/bare creates rolled out 0.80×.",
		"| first deploy of 1,000: median of the repeated pairs ≤ 0.4× kapp | 0.40× | yes |",
		"| first deploy of 1,000: median of the repeated runs ≤ 1.2× bare creates | 1.00× | yes |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestRepeatTargetNeedsFiveRuns(t *testing.T) {
	r := &report{Sizes: []int{1000}, Versions: map[string]string{}}
	pair := firstPair{Kapp: measurement{Wall: 10 * time.Second}, Ours: measurement{Wall: 4 * time.Second}}
	r.addRepeat(1000, pair)
	if want := "| 1 of 1 (0.40): too few runs | – |"; !strings.Contains(r.Markdown(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, r.Markdown())
	}
	for range 4 {
		r.addRepeat(1000, pair)
	}
	if want := "| 5 of 5 (0.40, 0.40, 0.40, 0.40, 0.40) | yes |"; !strings.Contains(r.Markdown(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, r.Markdown())
	}
}

func TestRepeatFirstFlag(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.repeatFirst != 0 {
		t.Errorf("--repeat-first defaults to %d, want 0 (off)", c.repeatFirst)
	}
	c, err = parseFlags([]string{"--sizes", "1000", "--repeat-first", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.repeatFirst != 5 || len(c.sizes) != 1 || c.sizes[0] != 1000 {
		t.Errorf("repeat-first %d, sizes %v; want 5, [1000]", c.repeatFirst, c.sizes)
	}
	var stderr strings.Builder
	if _, err := parseFlags([]string{"--repeat-first", "-1"}, &stderr); err == nil || !strings.Contains(stderr.String(), "--repeat-first") {
		t.Errorf("a negative --repeat-first: error %v, stderr %q", err, stderr.String())
	}
}
