package binding

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Version is the binding format version this package reads
// (ptxprop_binding: 1).
const Version = 1

// file is a binding file as written. Fields that errors point at keep their
// line.
type file struct {
	Version     int               `yaml:"ptxprop_binding"`
	Name        string            `yaml:"name"`
	Contract    pos[string]       `yaml:"contract"`
	PTX         pos[string]       `yaml:"ptx"`
	DType       pos[string]       `yaml:"dtype"`
	DTypes      map[string]string `yaml:"dtypes"`
	Constants   yaml.Node         `yaml:"constants"`
	Let         yaml.Node         `yaml:"let"`
	Constraints []pos[string]     `yaml:"constraints"`
	Saved       pos[string]       `yaml:"saved"`
	Forward     pos[string]       `yaml:"forward"`
	Launches    []launchDecl      `yaml:"launches"`
	Scratch     []scratchDecl     `yaml:"scratch"`
	Alias       yaml.Node         `yaml:"alias"`
	RowStride   pos[string]       `yaml:"row_stride"`
	Reductions  []reductionDecl   `yaml:"reductions"`
	Claims      pos[claimsDecl]   `yaml:"claims"`
	Inputs      yaml.Node         `yaml:"inputs"`
	HostSums    []hostSumDecl     `yaml:"host_sums"`
	Views       bool              `yaml:"views"`
}

// inputDecl is an extra read-only input (inputs: NAME: {shape, value}).
type inputDecl struct {
	Shape []pos[string] `yaml:"shape"`
	Value string        `yaml:"value"`
}

// hostSumDecl is a sum ptxprop performs on the host after the launches
// (host_sums): output into[j] = Σ_r from[r·n + j] over rows partial rows.
type hostSumDecl struct {
	Into string      `yaml:"into"`
	From string      `yaml:"from"`
	Rows pos[string] `yaml:"rows"`
	Line int         `yaml:"-"`
}

func (h *hostSumDecl) UnmarshalYAML(n *yaml.Node) error {
	type plain hostSumDecl
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*h = hostSumDecl(p)
	h.Line = n.Line
	return nil
}

// claimsDecl is what a kernel claims beyond its contract's values, by the
// claim's name (properties.Prediction.Claim): each true unless the file
// says false. The schema lists the names.
type claimsDecl map[string]bool

// pos is a value with the line it was written on.
type pos[T any] struct {
	V    T
	Line int
	Set  bool
}

func (p *pos[T]) UnmarshalYAML(n *yaml.Node) error {
	p.Line, p.Set = n.Line, true
	return n.Decode(&p.V)
}

type launchDecl struct {
	Entry  pos[string]   `yaml:"entry"`
	PTX    pos[string]   `yaml:"ptx"`
	Grid   []pos[string] `yaml:"grid"`
	Block  []pos[string] `yaml:"block"`
	Shared pos[string]   `yaml:"shared"`
	Params []paramDecl   `yaml:"params"`
	Line   int           `yaml:"-"`
}

func (l *launchDecl) UnmarshalYAML(n *yaml.Node) error {
	type plain launchDecl
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*l = launchDecl(p)
	l.Line = n.Line
	return nil
}

// paramDecl is one entry of a launch's params: a role name, or a mapping
// {stride: T}, {scratch: NAME}, {ignore: VALUE} or {value: EXPR}.
type paramDecl struct {
	Role    string
	Stride  string
	Scratch string
	Ignore  *yaml.Node
	Value   string
	Line    int
}

func (p *paramDecl) UnmarshalYAML(n *yaml.Node) error {
	p.Line = n.Line
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&p.Role)
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return fmt.Errorf("line %d: a parameter is a role name or one of {stride: T}, {scratch: NAME}, {ignore: VALUE}, {value: EXPR}", n.Line)
	}
	k, v := n.Content[0].Value, n.Content[1]
	switch k {
	case "stride":
		return v.Decode(&p.Stride)
	case "scratch":
		return v.Decode(&p.Scratch)
	case "ignore":
		p.Ignore = v
		return nil
	case "value":
		return v.Decode(&p.Value)
	}
	return fmt.Errorf("line %d: unknown parameter form %q (stride, scratch, ignore, value)", n.Line, k)
}

type scratchDecl struct {
	Name  string      `yaml:"name"`
	DType string      `yaml:"dtype"`
	Size  pos[string] `yaml:"size"`
	Init  string      `yaml:"init"`
	Line  int         `yaml:"-"`
}

func (s *scratchDecl) UnmarshalYAML(n *yaml.Node) error {
	type plain scratchDecl
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*s = scratchDecl(p)
	s.Line = n.Line
	return nil
}

// reductionDecl declares the order of one float32 sum, for tighter bounds.
type reductionDecl struct {
	Sum    string      `yaml:"sum"` // row | dgamma | dbeta
	Serial pos[string] `yaml:"serial"`
	Tree   pos[string] `yaml:"tree"`
	Line   int         `yaml:"-"`
}

func (r *reductionDecl) UnmarshalYAML(n *yaml.Node) error {
	type plain reductionDecl
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*r = reductionDecl(p)
	r.Line = n.Line
	return nil
}
