package schedule

import (
	"slices"
	"strings"
	"testing"

	"landslide/record"
)

// TestParseFormat: the text form keeps a choice's thread and value (the
// value only when not 0), and reads back what it writes.
func TestParseFormat(t *testing.T) {
	cs := []record.Choice{{Thread: 1}, {Thread: 2, Value: 5}, {Thread: 3, Value: -7}, {Thread: 12}}
	const text = "1,2:5,3:-7,12"
	if got := Format(cs); got != text {
		t.Errorf("Format = %q, want %q", got, text)
	}
	got, err := Parse(" 1, 2:5 ,3:-7,12 ")
	if err != nil || !slices.Equal(got, cs) {
		t.Errorf("Parse = %v, %v; want %v", got, err, cs)
	}
	if got, err := Parse(""); err != nil || got != nil {
		t.Errorf("Parse(\"\") = %v, %v: want no choices", got, err)
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"1,x":   `item 2 "x"`,
		"0":     `item 1 "0"`,
		"1,2:z": `item 2 "2:z": bad value`,
		"1,,2":  `item 2 ""`,
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error naming %s", in, err, want)
		}
	}
}
