package mcpserver

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestLoggerSDKAtDebug checks that WithLogger is the one logger: the
// server's own records keep their level, and the go-sdk's are logged at
// debug level, tagged, and filtered by the application's level.
func TestLoggerSDKAtDebug(t *testing.T) {
	var buf bytes.Buffer
	info := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var c config
	if err := WithLogger(info)(&c); err != nil {
		t.Fatal(err)
	}
	c.sdkLogger.Info("sdk chatter")
	c.logger.Warn("server warning")
	if out := buf.String(); strings.Contains(out, "sdk chatter") || !strings.Contains(out, "server warning") {
		t.Errorf("at info level: %q", out)
	}

	buf.Reset()
	debug := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := WithLogger(debug)(&c); err != nil {
		t.Fatal(err)
	}
	c.sdkLogger.With("k", "v").WithGroup("g").Log(context.Background(), slog.LevelError, "sdk detail", "x", 1)
	out := buf.String()
	for _, want := range []string{"level=DEBUG", "sdk detail", "component=go-sdk", "k=v", "g.x=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("at debug level: %q lacks %q", out, want)
		}
	}
}
