package nightly

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/ptxprop/ptxprop/reports"
)

// SanitizerTools are the compute-sanitizer tools the nightly runs.
var SanitizerTools = []string{"memcheck", "racecheck", "initcheck", "synccheck"}

// prefix starts every line compute-sanitizer writes; the program's own
// output (a test binary's) is interleaved with it, unprefixed.
const prefix = "========="

// ParseSanitizer reads the output of one compute-sanitizer run of tool
// (memcheck, racecheck, initcheck or synccheck) and returns its findings
// in the order reported. A record starts at a prefixed line that is not
// indented (e.g. "========= Invalid __global__ write of size 4 bytes") and
// runs over the indented lines after it; the banner, the summaries and
// host backtraces are not findings. The kernel and the PTX line come from
// the record's first device location ("at 0x70 in kernel", "at
// kernel+0x70 in file.ptx:12", "at 0x70 in file.cu:6:kernel(int*)"): the
// line is a PTX line only when the file is a .ptx file. Message is the
// record's text up to its host backtrace, the SASS offset included.
// Output without any prefixed line is an error: compute-sanitizer did not
// run.
func ParseSanitizer(r io.Reader, tool string) ([]reports.SanitizerFinding, error) {
	var (
		out   []reports.SanitizerFinding
		cur   []string
		seen  bool
		inBT  bool // in a host backtrace: the rest of the record is frames
		flush = func() {
			if len(cur) > 0 {
				if f, ok := finding(tool, cur); ok {
					out = append(out, f)
				}
			}
			cur, inBT = nil, false
		}
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		i := strings.Index(line, prefix)
		if i < 0 {
			continue // the program's own output
		}
		seen = true
		body := strings.TrimLeft(line[i+len(prefix):], "=")
		text := strings.TrimSpace(body)
		switch {
		case text == "":
			flush()
		case !strings.HasPrefix(body, "  "): // a record's first line
			flush()
			cur = []string{text}
		case len(cur) > 0 && !inBT:
			if strings.HasPrefix(text, "Saved host backtrace") || strings.HasPrefix(text, "Host Frame") || strings.HasPrefix(text, "Device Frame") {
				inBT = true
				continue
			}
			cur = append(cur, text)
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nightly: reading %s output: %w", tool, err)
	}
	if !seen {
		return nil, fmt.Errorf("nightly: no compute-sanitizer output from %s (no %q line)", tool, prefix)
	}
	return out, nil
}

var (
	sizeRe    = regexp.MustCompile(`\s+of size \d+ bytes?`)
	apiRe     = regexp.MustCompile(`^Program hit (\S+)`)
	hazardsRe = regexp.MustCompile(`\s*\[\d+ hazards?\]$`)
	raceRe    = regexp.MustCompile(`^(Error|Warning): Race reported between (\w+) access at (.*)$`)
	hazardRe  = regexp.MustCompile(`^(?:ERROR|WARN(?:ING)?): Potential (\w+) hazard detected at (__shared__|__global__) `)
	fileRe    = regexp.MustCompile(`^(.*?):(\d+)(?::(.*))?$`)
)

// notFindings are the first lines of records that report no error.
var notFindings = []string{"COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "Target application returned",
	"Error: process didn't terminate successfully", "No CUDA-capable device", "Tool", "Internal Sanitizer Error"}

// finding turns one record into a finding; ok is false for records that
// report no error (banners, summaries).
func finding(tool string, rec []string) (f reports.SanitizerFinding, ok bool) {
	first := rec[0]
	for _, n := range notFindings {
		if strings.HasPrefix(first, n) {
			return f, false
		}
	}
	f = reports.SanitizerFinding{Tool: tool, Message: strings.Join(rec, "\n")}
	var loc string // the first device location, after "at "
	switch {
	case apiRe.MatchString(first):
		f.Kind = apiRe.FindStringSubmatch(first)[1] // e.g. CUDA_ERROR_INVALID_VALUE: an API error, no kernel
		return f, true
	case raceRe.MatchString(first):
		m := raceRe.FindStringSubmatch(first)
		other := ""
		if len(rec) > 1 {
			if o := regexp.MustCompile(`^and (\w+) access`).FindStringSubmatch(rec[1]); o != nil {
				other = o[1]
			}
		}
		f.Kind = "race " + strings.ToLower(m[2]+"-"+other)
		if other == "" {
			f.Kind = "race " + strings.ToLower(m[2])
		}
		if m[1] == "Warning" {
			f.Kind += " (warning)"
		}
		loc = hazardsRe.ReplaceAllString(m[3], "")
	case hazardRe.MatchString(first):
		m := hazardRe.FindStringSubmatch(first)
		f.Kind = m[1] + " hazard on " + m[2]
	default:
		f.Kind = strings.TrimSuffix(sizeRe.ReplaceAllString(first, ""), ".")
	}
	if loc == "" {
		for _, l := range rec[1:] {
			if rest, found := strings.CutPrefix(l, "at "); found {
				loc = rest
				break
			}
			// racecheck's hazard mode: "Write Thread (0, 0, 0) at 0x70 in kernel"
			if i := strings.Index(l, ") at "); i >= 0 && strings.Contains(l, "Thread") {
				loc = l[i+len(") at "):]
				break
			}
		}
	}
	f.Kernel, f.PTXLine = location(loc)
	return f, true
}

// location reads a device location as compute-sanitizer prints it:
//
//	0x70 in planted_oob_write
//	0x70 in file.cu:6:kernel(int*)
//	planted_oob_write+0x70
//	planted_oob_write+0x70 in planted.ptx:42
//	kernel(int *)+0x70 in file.cu:6
//
// and returns the kernel's name (without parameters) and the PTX line, 0
// unless the file is a .ptx file.
func location(loc string) (kernel string, ptxLine int) {
	loc = strings.TrimSpace(loc)
	if loc == "" {
		return "", 0
	}
	what, where, hasIn := strings.Cut(loc, " in ")
	if strings.HasPrefix(what, "0x") && hasIn { // old form: the offset, then the place
		if m := fileRe.FindStringSubmatch(where); m != nil && m[3] != "" {
			return funcName(m[3]), ptxLineOf(m[1], m[2])
		}
		return funcName(where), 0
	}
	if i := strings.LastIndex(what, "+0x"); i >= 0 { // new form: function+offset
		what = what[:i]
	}
	if hasIn {
		if m := fileRe.FindStringSubmatch(where); m != nil {
			ptxLine = ptxLineOf(m[1], m[2])
		}
	}
	return funcName(what), ptxLine
}

func ptxLineOf(file, line string) int {
	if !strings.HasSuffix(file, ".ptx") {
		return 0
	}
	n, err := strconv.Atoi(line)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// funcName is a function's name less its parameters and return type:
// "void k<float>(float*)" → "k<float>".
func funcName(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '('); i > 0 {
		s = s[:i]
	}
	depth, cut := 0, 0 // the last space outside template arguments ends the return type
	for i, c := range s {
		switch c {
		case '<':
			depth++
		case '>':
			depth--
		case ' ':
			if depth == 0 {
				cut = i + 1
			}
		}
	}
	return s[cut:]
}
