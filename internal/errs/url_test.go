package errs

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestWithoutURL(t *testing.T) {
	for _, raw := range []string{
		"https://user:pass-secret@h/m%zzcp?token=query-secret",
		"https://h:port-secret/x?token=query-secret",
		"http://[::1/x?token=query-secret",
		"stdio:///c%zzmd?env=K%3Dquery-secret",
	} {
		_, err := url.Parse(raw)
		if err == nil {
			t.Fatalf("%q parses", raw)
		}
		got := WithoutURL(err)
		if strings.Contains(got.Error(), "query-secret") || strings.Contains(got.Error(), "pass-secret") {
			t.Errorf("%q: %q shows a secret", raw, got)
		}
		var ue *url.Error
		if errors.As(got, &ue) || !errors.Is(got, err.(*url.Error).Err) {
			t.Errorf("%q: %v does not keep just the cause", raw, got)
		}
	}
	other := errors.New("other")
	if WithoutURL(other) != other {
		t.Error("another error was changed")
	}
}
