package reports

import (
	"encoding/json"
	"fmt"
	"math"
)

// extFloat is a float64 whose JSON form admits NaN and ±Inf as the strings
// "NaN", "+Inf" and "-Inf" (schema: $defs/ext_float).
type extFloat float64

func (f extFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(x)
}

func (f *extFloat) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*f = extFloat(math.NaN())
		case "+Inf":
			*f = extFloat(math.Inf(1))
		case "-Inf":
			*f = extFloat(math.Inf(-1))
		default:
			return fmt.Errorf("invalid number %q (want a JSON number, \"NaN\", \"+Inf\" or \"-Inf\")", s)
		}
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*f = extFloat(x)
	return nil
}

// errorStatsJSON is the wire form of ErrorStats; keep its tags identical.
type errorStatsJSON struct {
	MaxAbs           *extFloat  `json:"max_abs,omitempty"`
	MaxRel           *extFloat  `json:"max_rel,omitempty"`
	MaxULP           *extFloat  `json:"max_ulp,omitempty"`
	MaxRatio         extFloat   `json:"max_ratio"`
	ToleranceFormula string     `json:"tolerance_formula,omitempty"`
	NaiveRatio       *extFloat  `json:"naive_ratio,omitempty"`
	BySize           []SizeStat `json:"by_size,omitempty"`
}

func toExt(x *float64) *extFloat {
	if x == nil {
		return nil
	}
	e := extFloat(*x)
	return &e
}

func fromExt(x *extFloat) *float64 {
	if x == nil {
		return nil
	}
	f := float64(*x)
	return &f
}

// MarshalJSON encodes e, writing NaN and ±Inf as "NaN", "+Inf" and "-Inf".
func (e ErrorStats) MarshalJSON() ([]byte, error) {
	return marshalJSON(errorStatsJSON{
		MaxAbs:           toExt(e.MaxAbs),
		MaxRel:           toExt(e.MaxRel),
		MaxULP:           toExt(e.MaxULP),
		MaxRatio:         extFloat(e.MaxRatio),
		ToleranceFormula: e.ToleranceFormula,
		NaiveRatio:       toExt(e.NaiveRatio),
		BySize:           e.BySize,
	})
}

// UnmarshalJSON decodes e, accepting "NaN", "+Inf" and "-Inf" for numbers.
// It rejects unknown fields, like the schema; Parse checks required ones.
func (e *ErrorStats) UnmarshalJSON(b []byte) error {
	var w errorStatsJSON
	if err := strictUnmarshal(b, &w); err != nil {
		return err
	}
	*e = ErrorStats{
		MaxAbs:           fromExt(w.MaxAbs),
		MaxRel:           fromExt(w.MaxRel),
		MaxULP:           fromExt(w.MaxULP),
		MaxRatio:         float64(w.MaxRatio),
		ToleranceFormula: w.ToleranceFormula,
		NaiveRatio:       fromExt(w.NaiveRatio),
		BySize:           w.BySize,
	}
	return nil
}

// sizeStatJSON is the wire form of SizeStat; keep its tags identical.
type sizeStatJSON struct {
	SizeMin   int      `json:"size_min"`
	SizeMax   int      `json:"size_max"`
	Checks    int      `json:"checks"`
	MaxRatio  extFloat `json:"max_ratio"`
	Generator string   `json:"generator,omitempty"`
}

// MarshalJSON encodes s, writing a NaN or +Inf ratio as ErrorStats does.
func (s SizeStat) MarshalJSON() ([]byte, error) {
	return marshalJSON(sizeStatJSON{s.SizeMin, s.SizeMax, s.Checks, extFloat(s.MaxRatio), s.Generator})
}

// UnmarshalJSON decodes s, rejecting unknown fields.
func (s *SizeStat) UnmarshalJSON(b []byte) error {
	var w sizeStatJSON
	if err := strictUnmarshal(b, &w); err != nil {
		return err
	}
	*s = SizeStat{w.SizeMin, w.SizeMax, w.Checks, float64(w.MaxRatio), w.Generator}
	return nil
}
