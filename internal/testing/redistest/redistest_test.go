package redistest

import (
	"testing"
)

func TestStartKillRestart(t *testing.T) {
	s := Start(t)
	if err := ping(s.Socket()); err != nil {
		t.Fatalf("a started server: %v", err)
	}
	s.Kill()
	if err := ping(s.Socket()); err == nil {
		t.Fatal("a killed server still answers")
	}
	s.Kill() // twice is harmless
	s.Restart()
	if err := ping(s.Socket()); err != nil {
		t.Fatalf("a restarted server: %v", err)
	}
}
