// Package benchpair times variants of one operation beside their baseline
// in the same benchmark, call by call in turn, so that the load of a
// shared machine weighs on every variant alike: each round of b.N runs
// every variant once, in an order shuffled from round to round (with a
// fixed seed), so that each variant runs after each other one as often.
// An order that only rotated would keep the same neighbours: what one
// operation leaves running as it returns (its goroutines finishing, its
// connection going back to the pool) would weigh on the start of the
// one after it, always the same one. It
// reports each variant's median time (name-ns/op) and the ratio of each
// median to the baseline's (name/baseline), the figure to compare across
// runs (benchstat summarises both).
package benchpair

import (
	"math/rand/v2"
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
	order := make([]int, len(variants))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
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
