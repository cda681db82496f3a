package search

import "testing"

// TestStem checks the stemmer against the outputs of Porter's reference
// implementation for words of his paper and of tool descriptions.
func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
		"rational": "ration", "digitizer": "digit", "operator": "oper", "feudalism": "feudal",
		"decisiveness": "decis", "hopefulness": "hope", "callousness": "callous", "formality": "formal",
		"sensitivity": "sensit", "sensibility": "sensibl", "triplicate": "triplic", "formative": "form",
		"formalize": "formal", "electricity": "electr", "electrical": "electr", "hopeful": "hope",
		"goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer",
		"airliner": "airlin", "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
		"irritant": "irrit", "replacement": "replac", "adjustment": "adjust", "dependent": "depend",
		"adoption": "adopt", "homologous": "homolog", "communism": "commun", "activate": "activ",
		"angularity": "angular", "effective": "effect", "bowdlerize": "bowdler", "probate": "probat",
		"rate": "rate", "cease": "ceas", "controlling": "control", "roll": "roll", "generalization": "gener",
		"connection": "connect", "connections": "connect", "connected": "connect", "connecting": "connect",
		"delete": "delet", "deleted": "delet", "deleting": "delet", "deletes": "delet",
		"directory": "directori", "directories": "directori", "files": "file", "running": "run",
		"searches": "search", "searching": "search", "repositories": "repositori", "repository": "repositori",
		"screenshot": "screenshot", "screenshots": "screenshot", "created": "creat", "creates": "creat",
		"creating": "creat", "listing": "list", "lists": "list",
		// Left alone: short, not ASCII letters, digits.
		"go": "go", "a": "a", "": "", "été": "été", "v2": "v2", "http2": "http2", "ABC": "ABC",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzStem: any input stems without a panic, to no longer a string, and
// stemming is stable on what it returns for plain words.
func FuzzStem(f *testing.F) {
	for _, s := range []string{"caresses", "yyyy", "sses", "ies", "eed", "ing", "ed", "y", "ational", "\xff\xfe", "ééé", "ll", "e", "zzzzzzzzzzzing"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := stem(s)
		if len(out) > len(s)+1 { // step 1b may add an "e" after removing "ed"/"ing"
			t.Errorf("stem(%q) = %q grew", s, out)
		}
	})
}
