package page

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot sizes: small multiples for one prediction or kernel, wide for a trend.
const (
	smallW, smallH = 4.2 * vg.Inch, 2.6 * vg.Inch
	wideW, wideH   = 8 * vg.Inch, 3 * vg.Inch
)

// palette is a colour-blind safe palette (Okabe and Ito), cycled.
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255}, color.RGBA{230, 159, 0, 255}, color.RGBA{86, 180, 233, 255},
	color.RGBA{0, 0, 0, 255}, color.RGBA{240, 228, 66, 255},
}

func colorOf(i int) color.Color { return palette[i%len(palette)] }

// svg renders p as an SVG element for inlining in HTML: the XML prelude
// and comments gonum writes are dropped, and the element gets class
// "plot" and the accessible label title.
func svg(p *plot.Plot, w, h vg.Length, title string) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("page: rendering plot %q: %w", title, err)
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("page: plot %q: no <svg> element in gonum's output", title)
	}
	s = s[i:]
	label := strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(title)
	return strings.Replace(s, "<svg", `<svg class="plot" role="img" aria-label="`+label+`"`, 1), nil
}

// series is one line of a plot: points, with optional error bars.
type series struct {
	name   string
	xy     plotter.XYs
	lo, hi []float64 // per point, the bar's ends; nil for none
}

// linePlot draws series against a shared x axis; logX plots x on a log
// scale (x > 0), ticks labels x at the given values when set, and ref
// draws a dashed horizontal line at y = ref (with refName) when positive.
func linePlot(title, xLabel, yLabel string, ss []series, logX bool, ticks []plot.Tick, ref float64, refName string, w, h vg.Length) (string, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Legend.Top = true
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if ticks != nil {
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	p.Add(plotter.NewGrid())
	ymax, xmin, xmax := 0.0, math.Inf(1), math.Inf(-1)
	for i, s := range ss {
		if len(s.xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(s.xy)
		if err != nil {
			return "", fmt.Errorf("page: plot %q, series %q: %w", title, s.name, err)
		}
		l.Color, pts.Color = colorOf(i), colorOf(i)
		pts.Shape = draw.CircleGlyph{}
		p.Add(l, pts)
		if len(ss) > 1 || s.name != "" {
			p.Legend.Add(s.name, l, pts)
		}
		for j, q := range s.xy {
			ymax, xmin, xmax = math.Max(ymax, q.Y), math.Min(xmin, q.X), math.Max(xmax, q.X)
			if s.hi != nil {
				ymax = math.Max(ymax, s.hi[j])
			}
		}
		if s.lo != nil {
			bars := make(errorPoints, len(s.xy))
			for j, q := range s.xy {
				bars[j] = errorPoint{q.X, q.Y, q.Y - s.lo[j], s.hi[j] - q.Y}
			}
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return "", fmt.Errorf("page: plot %q, series %q: %w", title, s.name, err)
			}
			eb.Color = colorOf(i)
			p.Add(eb)
		}
	}
	if ref > 0 && !math.IsInf(xmin, 0) {
		l, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: ref}, {X: xmax, Y: ref}})
		if err != nil {
			return "", err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Color = color.RGBA{200, 0, 0, 255}
		p.Add(l)
		p.Legend.Add(refName, l)
		ymax = math.Max(ymax, ref)
	}
	if math.IsInf(ymax, 0) || math.IsNaN(ymax) || ymax == 0 {
		ymax = 1
	}
	p.Y.Max = ymax * 1.12
	return svg(p, w, h, title)
}

type errorPoint struct{ x, y, low, high float64 }

type errorPoints []errorPoint

func (e errorPoints) Len() int                        { return len(e) }
func (e errorPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errorPoints) YError(i int) (float64, float64) { return e[i].low, e[i].high }
