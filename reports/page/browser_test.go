package page

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// browserNames are the names a Chromium binary goes by: Debian's package
// installs chromium.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// browser returns the path of a Chromium binary. Without one the test is
// skipped, unless PTXPROP_REQUIRE_BROWSER is set (CI sets it: .ci/run
// installs chromium), and then it fails.
func browser(t *testing.T) string {
	t.Helper()
	for _, n := range browserNames {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := "no Chromium binary (" + strings.Join(browserNames, ", ") + ") on PATH; apt-get install chromium to run the browser test"
	if os.Getenv("PTXPROP_REQUIRE_BROWSER") != "" {
		t.Fatalf("%s, and PTXPROP_REQUIRE_BROWSER is set", msg)
	}
	t.Skip(msg)
	return ""
}

// chromium runs the browser headless on the page with args and returns
// its standard output. It has a profile of its own in a temporary
// directory; as root it must run without its sandbox.
func chromium(t *testing.T, bin, dir, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	all := []string{"--headless", "--disable-gpu", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile"),
		// No fetch could leave the machine: every host name resolves nowhere.
		"--host-resolver-rules=MAP * ~NOTFOUND"}
	if os.Geteuid() == 0 {
		all = append(all, "--no-sandbox")
	}
	all = append(append(all, args...), "file://"+page)
	cmd := exec.CommandContext(ctx, bin, all...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\n%s", bin, all, err, errb.String())
	}
	return out.Bytes()
}

// TestPageInBrowser loads a page built from the committed test reports in
// headless Chromium: the DOM it builds has every table and every plot,
// each plot an SVG with drawn paths and text; the screenshot shows the
// plots' colours; and nothing on the page points outside it.
func TestPageInBrowser(t *testing.T) {
	bin := browser(t)
	dir := t.TempDir()
	rs, names := nights(t)
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte(render(t, rs, names)), 0o644); err != nil {
		t.Fatal(err)
	}

	dom := string(chromium(t, bin, dir, page, "--dump-dom"))
	for _, id := range []string{"predictions-table", "glance", "coverage-table", "bandwidth-table", "costs-table",
		"sanitizer-table", "kill-matrix-table", "generic-table", "trend-table"} {
		if !strings.Contains(dom, `id="`+id+`"`) {
			t.Errorf("the browser's DOM has no #%s", id)
		}
	}
	// 9 predictions in the table, the glance and the trend.
	if n := strings.Count(dom, `<span class="s-`); n != 9 {
		t.Errorf("%d status squares at a glance, want 9", n)
	}
	plots := regexp.MustCompile(`(?s)<svg class="plot".*?</svg>`).FindAllString(dom, -1)
	if len(plots) != 15 {
		t.Errorf("%d plots in the DOM, want 15", len(plots))
	}
	for i, p := range plots {
		if strings.Count(p, "<path") < 10 || strings.Count(p, "<text") < 5 {
			t.Errorf("plot %d is nearly empty: %d paths, %d texts", i, strings.Count(p, "<path"), strings.Count(p, "<text"))
		}
	}
	if ext := externalRefs(dom); len(ext) > 0 {
		t.Errorf("the page loads from outside: %q", ext)
	}

	shot := filepath.Join(dir, "page.png")
	chromium(t, bin, dir, page, "--window-size=1300,2600", "--hide-scrollbars", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// The plots were painted: their line colours (palette) and the
	// tolerance's red are on the screen, each over many pixels.
	for _, c := range []color.RGBA{{0, 114, 178, 255}, {213, 94, 0, 255}, {200, 0, 0, 255}} {
		if n := pixels(img, c); n < 200 {
			t.Errorf("%d pixels of plot colour %v in the screenshot, want at least 200", n, c)
		}
	}
}

// pixels counts the pixels of img within 24 of c in each channel
// (antialiasing blends line edges).
func pixels(img image.Image, c color.RGBA) int {
	near := func(a uint32, b uint8) bool { d := int(a>>8) - int(b); return d > -24 && d < 24 }
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r, c.R) && near(g, c.G) && near(bl, c.B) {
				n++
			}
		}
	}
	return n
}
