package resource

import "testing"

func TestIsTextIsJSON(t *testing.T) {
	tests := []struct {
		mt           string
		text, isJSON bool
	}{
		{"text/plain", true, false},
		{"text/plain; charset=utf-8", true, false},
		{"TEXT/HTML", true, false},
		{"text/csv", true, false},
		{"text/json", true, true},
		{"application/json", true, true},
		{"Application/JSON; charset=utf-8", true, true},
		{"application/ld+json", true, true},
		{"application/vnd.api+json", true, true},
		{"application/x-ndjson", true, false},
		{"application/xml", true, false},
		{"image/svg+xml", true, false},
		{"application/atom+xml", true, false},
		{"application/javascript", true, false},
		{"application/yaml", true, false},
		{"application/x-yaml", true, false},
		{"application/toml", true, false},
		{"application/octet-stream", false, false},
		{"image/png", false, false},
		{"application/pdf", false, false},
		{"application/jsonx", false, false},
		{"", false, false},
		{"garbage", false, false},
	}
	for _, tt := range tests {
		if got := IsText(tt.mt); got != tt.text {
			t.Errorf("IsText(%q) = %v", tt.mt, got)
		}
		if got := IsJSON(tt.mt); got != tt.isJSON {
			t.Errorf("IsJSON(%q) = %v", tt.mt, got)
		}
	}
}

func TestExtensionType(t *testing.T) {
	tests := []struct{ ext, want string }{
		{"", ""},
		{".csv", "text/csv"},
		{".CSV", "text/csv"},
		{".md", "text/markdown"},
		{".json", "application/json"},
		{".yml", "application/yaml"},
		{".png", "image/png"},       // from the mime package's built-in table
		{".pdf", "application/pdf"}, // likewise
		{".no-such-extension", ""},
		{".", ""},
	}
	for _, tt := range tests {
		if got := extensionType(tt.ext); got != tt.want {
			t.Errorf("extensionType(%q) = %q, want %q", tt.ext, got, tt.want)
		}
	}
}

func TestRefine(t *testing.T) {
	tests := []struct{ sniffed, ext, want string }{
		{TypeBinary, ".png", "image/png"},
		{TypeBinary, ".csv", "text/csv"},
		{TypeBinary, "", TypeBinary},
		{"text/plain", ".png", "text/plain"},
		{"text/plain", ".md", "text/markdown"},
		{"text/plain", ".json", "application/json"},
		{"image/png", ".jpg", "image/png"},
		{"text/html", ".md", "text/html"},
	}
	for _, tt := range tests {
		if got := refine(tt.sniffed, tt.ext); got != tt.want {
			t.Errorf("refine(%q, %q) = %q, want %q", tt.sniffed, tt.ext, got, tt.want)
		}
	}
}
