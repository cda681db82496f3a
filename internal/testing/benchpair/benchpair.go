// Package benchpair times variants of one operation beside their baseline
// in the same benchmark, call by call in turn, so that the load of a
// shared machine weighs on every variant alike: each round of b.N runs
// every variant once, in an order that rotates from round to round. It
// reports each variant's median time (name-ns/op) and the ratio of each
// median to the baseline's (name/baseline), the figure to compare across
// runs (benchstat summarises both).
package benchpair

import (
	"slices"
	"testing"
	"time"
)

// Variant is one way of doing the operation.
type Variant struct {
	Name string
	Run  func() error
}

// Run times the variants, the first being the baseline, over b.N rounds.
// Each variant runs once before the timer starts, to warm it up. A
// variant's error fails the benchmark.
func Run(b *testing.B, variants ...Variant) {
	b.Helper()
	if len(variants) < 2 {
		b.Fatal("benchpair: a baseline and at least one variant are needed")
	}
	for _, v := range variants {
		if err := v.Run(); err != nil {
			b.Fatalf("%s: %v", v.Name, err)
		}
	}
	times := make([][]time.Duration, len(variants))
	b.ReportAllocs()
	b.ResetTimer()
	for round := 0; b.Loop(); round++ {
		for k := range variants {
			i := (round + k) % len(variants)
			t0 := time.Now()
			err := variants[i].Run()
			times[i] = append(times[i], time.Since(t0))
			if err != nil {
				b.Fatalf("%s: %v", variants[i].Name, err)
			}
		}
	}
	b.StopTimer()
	base := median(times[0])
	for i, v := range variants {
		m := median(times[i])
		b.ReportMetric(float64(m.Nanoseconds()), v.Name+"-ns/op")
		if i > 0 && base > 0 {
			b.ReportMetric(float64(m)/float64(base), v.Name+"/"+variants[0].Name)
		}
	}
}

// median returns the median of ds (0 for none); ds is sorted.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
