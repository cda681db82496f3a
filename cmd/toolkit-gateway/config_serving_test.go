package main

import (
	"strings"
	"testing"
	"time"
)

func TestConfigStartupWait(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		want time.Duration
	}{
		{"listen: 127.0.0.1:0\n", defaultStartupWait},
		{"startup_wait: 0s\n", 0},
		{"startup_wait: 1m\n", time.Minute},
	} {
		cfg, err := parseConfig("gateway.yaml", []byte(tt.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tt.yaml, err)
		}
		if got := durationOf(cfg.StartupWait); got != tt.want {
			t.Errorf("%q: startup wait %v, want %v", tt.yaml, got, tt.want)
		}
	}
}

func TestConfigServingErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"startup_wait: -1s\n":               "gateway.yaml:1: startup_wait: must not be negative",
		"startup_wait: soon\n":              "gateway.yaml:1: startup_wait: cannot use \"soon\" as a duration",
		"transport: stdio\nmetrics: true\n": "gateway.yaml:2: metrics: with transport stdio, metrics are served on health_listen",
		"path: /metrics\nmetrics: true\n":   "gateway.yaml:1: path: \"/metrics\" is where metrics are served",
		"metrics: yes please\n":             "gateway.yaml:1: metrics: cannot use \"yes please\" as true or false",
	} {
		_, err := parseConfig("gateway.yaml", []byte(yaml))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", yaml, err, want)
		}
	}
	if _, err := parseConfig("gateway.yaml", []byte("transport: stdio\nhealth_listen: 127.0.0.1:0\nmetrics: true\n")); err != nil {
		t.Errorf("metrics on health_listen: %v", err)
	}
}
