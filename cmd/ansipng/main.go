// Command ansipng renders terminal text with ANSI colours (what `tmux
// capture-pane -e -p` prints) to a PNG in a monospace font, so the README's
// screenshot is made from a real terminal by a script (docs/screenshot.sh)
// rather than by hand.
//
//	tmux capture-pane -e -p -t kql | ansipng -o docs/watch.png
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

func main() {
	out := flag.String("o", "", "the PNG to write (required)")
	size := flag.Float64("size", 15, "font size in pixels")
	pad := flag.Int("pad", 12, "padding around the text, in pixels")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "ansipng: -o FILE.png is required; the terminal text comes on stdin")
		os.Exit(2)
	}
	if err := run(os.Stdin, *out, *size, *pad); err != nil {
		fmt.Fprintln(os.Stderr, "ansipng:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out string, size float64, pad int) error {
	screen, err := parse(in)
	if err != nil {
		return err
	}
	img, err := paint(screen, size, pad)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// style is one cell's SGR state.
type style struct {
	fg, bg       color.RGBA
	fgSet, bgSet bool
	bold, dim    bool
	reverse      bool
}

type cell struct {
	r rune
	s style
}

var (
	defaultFG = color.RGBA{0xd8, 0xd8, 0xd8, 0xff}
	defaultBG = color.RGBA{0x1c, 0x1c, 0x1c, 0xff}
	// xterm's 16 colours, softened as most terminal themes do.
	palette16 = []color.RGBA{
		{0x2e, 0x34, 0x36, 0xff}, {0xe0, 0x50, 0x50, 0xff}, {0x6a, 0xc0, 0x4a, 0xff}, {0xe0, 0xb0, 0x40, 0xff},
		{0x50, 0x8c, 0xe0, 0xff}, {0xb0, 0x70, 0xd0, 0xff}, {0x40, 0xb8, 0xc0, 0xff}, {0xd3, 0xd7, 0xcf, 0xff},
		{0x55, 0x57, 0x53, 0xff}, {0xff, 0x70, 0x70, 0xff}, {0x8a, 0xe2, 0x34, 0xff}, {0xfc, 0xe9, 0x4f, 0xff},
		{0x72, 0x9f, 0xcf, 0xff}, {0xd0, 0x90, 0xf0, 0xff}, {0x60, 0xe0, 0xe0, 0xff}, {0xff, 0xff, 0xff, 0xff},
	}
)

// color256 is xterm's 256-colour palette.
func color256(n int) color.RGBA {
	switch {
	case n < 16:
		return palette16[n]
	case n < 232:
		n -= 16
		level := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + 40*v)
		}
		return color.RGBA{level(n / 36), level(n / 6 % 6), level(n % 6), 0xff}
	default:
		g := uint8(8 + 10*(n-232))
		return color.RGBA{g, g, g, 0xff}
	}
}

// parse reads lines of text with SGR escapes into cells; other escapes are
// dropped.
func parse(in io.Reader) ([][]cell, error) {
	var screen [][]cell
	var st style
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line []cell
		rs := []rune(sc.Text())
		for i := 0; i < len(rs); i++ {
			r := rs[i]
			if r != 0x1b {
				if r == '\t' {
					for len(line)%8 != 7 {
						line = append(line, cell{' ', st})
					}
					r = ' '
				}
				if r >= ' ' {
					line = append(line, cell{r, st})
				}
				continue
			}
			if i+1 >= len(rs) || rs[i+1] != '[' {
				i++ // a two-character escape
				continue
			}
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j < len(rs) && rs[j] == 'm' {
				st = sgr(st, string(rs[i+2:j]))
			}
			i = j
		}
		screen = append(screen, line)
	}
	// tmux pads the pane with empty lines: keep the text's own.
	for len(screen) > 0 && len(screen[len(screen)-1]) == 0 {
		screen = screen[:len(screen)-1]
	}
	return screen, sc.Err()
}

func sgr(st style, params string) style {
	if params == "" {
		params = "0"
	}
	ps := strings.Split(params, ";")
	num := func(i int) int {
		if i >= len(ps) {
			return 0
		}
		n, _ := strconv.Atoi(ps[i])
		return n
	}
	for i := 0; i < len(ps); i++ {
		n := num(i)
		switch {
		case n == 0:
			st = style{}
		case n == 1:
			st.bold = true
		case n == 2:
			st.dim = true
		case n == 22:
			st.bold, st.dim = false, false
		case n == 7:
			st.reverse = true
		case n == 27:
			st.reverse = false
		case n >= 30 && n <= 37:
			st.fg, st.fgSet = palette16[n-30], true
		case n >= 90 && n <= 97:
			st.fg, st.fgSet = palette16[n-90+8], true
		case n == 39:
			st.fgSet = false
		case n >= 40 && n <= 47:
			st.bg, st.bgSet = palette16[n-40], true
		case n >= 100 && n <= 107:
			st.bg, st.bgSet = palette16[n-100+8], true
		case n == 49:
			st.bgSet = false
		case n == 38 || n == 48:
			var c color.RGBA
			switch num(i + 1) {
			case 5:
				c = color256(num(i + 2))
				i += 2
			case 2:
				c = color.RGBA{uint8(num(i + 2)), uint8(num(i + 3)), uint8(num(i + 4)), 0xff}
				i += 4
			default:
				continue
			}
			if n == 38 {
				st.fg, st.fgSet = c, true
			} else {
				st.bg, st.bgSet = c, true
			}
		}
	}
	return st
}

func (s style) colors() (fg, bg color.RGBA) {
	fg, bg = defaultFG, defaultBG
	if s.fgSet {
		fg = s.fg
	}
	if s.bgSet {
		bg = s.bg
	}
	if s.reverse {
		fg, bg = bg, fg
	}
	if s.dim {
		fg = color.RGBA{uint8((int(fg.R) + int(bg.R)) / 2), uint8((int(fg.G) + int(bg.G)) / 2), uint8((int(fg.B) + int(bg.B)) / 2), 0xff}
	}
	return fg, bg
}

func newFace(ttf []byte, size float64) (font.Face, error) {
	f, err := opentype.Parse(ttf)
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
}

func paint(screen [][]cell, size float64, pad int) (*image.RGBA, error) {
	regular, err := newFace(gomono.TTF, size)
	if err != nil {
		return nil, err
	}
	bold, err := newFace(gomonobold.TTF, size)
	if err != nil {
		return nil, err
	}
	m := regular.Metrics()
	adv, _ := regular.GlyphAdvance('M')
	cw := adv.Ceil()
	ch := (m.Ascent + m.Descent).Ceil() + 2
	cols := 1
	for _, l := range screen {
		cols = max(cols, len(l))
	}
	rows := max(len(screen), 1)
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+2*pad, rows*ch+2*pad))
	draw.Draw(img, img.Bounds(), image.NewUniform(defaultBG), image.Point{}, draw.Src)
	for y, line := range screen {
		for x, c := range line {
			fg, bg := c.s.colors()
			r := image.Rect(pad+x*cw, pad+y*ch, pad+(x+1)*cw, pad+(y+1)*ch)
			if bg != defaultBG {
				draw.Draw(img, r, image.NewUniform(bg), image.Point{}, draw.Src)
			}
			if c.r == ' ' {
				continue
			}
			// Block elements are drawn, not looked up: Go Mono lacks most
			// of the eighths a sparkline is made of.
			if c.r >= 0x2581 && c.r <= 0x2588 {
				h := ch * int(c.r-0x2580) / 8
				draw.Draw(img, image.Rect(r.Min.X, r.Max.Y-h, r.Max.X, r.Max.Y), image.NewUniform(fg), image.Point{}, draw.Src)
				continue
			}
			face := regular
			if c.s.bold {
				face = bold
			}
			if _, ok := face.GlyphAdvance(c.r); !ok {
				c.r = '?'
			}
			d := font.Drawer{Dst: img, Src: image.NewUniform(fg), Face: face,
				Dot: fixed.P(r.Min.X, r.Min.Y+1+m.Ascent.Ceil())}
			d.DrawString(string(c.r))
		}
	}
	return img, nil
}
