// Command outside runs contracts through suite.Run in a plain program, as
// the ptxprop command does: no go test, no testing.Init, no flag.Parse.
// TestRunOutsideGoTest runs it.
package main

import (
	"context"
	"fmt"
	"os"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

func main() {
	properties.Register(properties.Prediction{ID: "OUT-PASS", Title: "outside (passing)", Statement: "x = x"})
	properties.Register(properties.Prediction{ID: "OUT-FAIL", Title: "outside (failing)", Statement: "x ≤ 1"})
	c := suite.Default()
	c.Backend, c.Report, c.Progress, c.Checks, c.Summary = "emu", os.Args[1], 0, 20, true
	c.Command, c.CommandArgs = "ptxprop verify", []string{"my kernel.yaml"}
	c.Output = os.Stdout
	rep, err := suite.Run(context.Background(), c, []suite.Job{
		{Name: "pass", Run: func(t properties.TB) {
			properties.Check(t, "OUT-PASS", func(rt *rapid.T, o *properties.Obs) {
				x := rapid.Float32Range(-1, 1).Draw(rt, "x")
				o.Within("x", []float32{x}, []float64{float64(x)}, []float64{0})
			})
		}},
		{Name: "fail", Run: func(t properties.TB) {
			properties.Check(t, "OUT-FAIL", func(rt *rapid.T, o *properties.Obs) {
				o.Ratio("x", rapid.Float64Range(0, 4).Draw(rt, "x"), 1)
			})
		}},
	})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	for _, id := range []string{"OUT-PASS", "OUT-FAIL"} {
		p := rep.Prediction(id)
		fmt.Printf("result %s %s %d\n", p.ID, p.Status, p.Checks)
		if p.Reproduction != nil {
			fmt.Printf("repro %s\n", p.Reproduction.Command)
		}
	}
}
