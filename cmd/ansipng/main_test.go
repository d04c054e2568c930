package main

import (
	"image/color"
	"strings"
	"testing"
)

func TestParseKeepsColoursAndDropsOtherEscapes(t *testing.T) {
	screen, err := parse(strings.NewReader("a\x1b[31mb\x1b[0m\x1b[1;38;5;46mc\x1b[39;22m\x1b[Kd\x1b[2me\n\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(screen) != 1 {
		t.Fatalf("want the empty lines tmux pads with dropped, got %d lines", len(screen))
	}
	var text strings.Builder
	for _, c := range screen[0] {
		text.WriteRune(c.r)
	}
	if text.String() != "abcde" {
		t.Fatalf("text %q, want abcde", text.String())
	}
	l := screen[0]
	if l[0].s.fgSet || l[1].s.fg != palette16[1] || !l[1].s.fgSet {
		t.Errorf("a plain, b red: %+v %+v", l[0].s, l[1].s)
	}
	if !l[2].s.bold || l[2].s.fg != color256(46) {
		t.Errorf("c bold, colour 46: %+v", l[2].s)
	}
	if l[3].s.fgSet || l[3].s.bold {
		t.Errorf("d back to the default: %+v", l[3].s)
	}
	if fg, _ := l[4].s.colors(); fg == defaultFG {
		t.Errorf("e dim: %v", fg)
	}
	if color256(16) != (color.RGBA{0, 0, 0, 0xff}) || color256(231) != (color.RGBA{0xff, 0xff, 0xff, 0xff}) {
		t.Errorf("the 256-colour cube is off")
	}
}

func TestPaintDrawsEveryLine(t *testing.T) {
	screen, _ := parse(strings.NewReader("lag ▁▂▃▄▅▆▇█\nok\n"))
	img, err := paint(screen, 15, 10)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() < 12*8 || b.Dy() < 2*15 {
		t.Fatalf("image %v is too small for 2 lines of 12 cells", b)
	}
	// The full block is drawn in the foreground colour at its cell's bottom.
	lit := false
	for x := b.Min.X; x < b.Max.X && !lit; x++ {
		lit = img.RGBAAt(x, b.Max.Y-10-(b.Dy()-20)/2-2) == defaultFG
	}
	if !lit {
		t.Error("no glyph pixels on the first line")
	}
}
