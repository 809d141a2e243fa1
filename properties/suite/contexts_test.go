package suite

import (
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/properties"
)

// The contexts of one GPU (-ptxprop.contexts) are one device of the
// report: devices that share a backend and an ordinal are merged, their
// launches added and a contract run counted once.
func TestContextsAreOneReportDevice(t *testing.T) {
	var devs []cudart.Device
	for range 3 {
		d, err := cudart.Open("emu", cudart.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs = append(devs, d)
	}
	s := newSpread(devs, properties.Config{})
	a := s.assign("TestX", nil)
	a.launches[0].Add(2)
	a.launches[2].Add(5)
	b := s.assign("TestY", nil)
	b.launches[1].Add(1)
	got := s.devices()
	if len(got) != 1 || got[0].Ordinal != 0 || got[0].Launches != 8 || got[0].ContractRuns != 2 {
		t.Fatalf("devices = %+v, want one device 0 with 8 launches from 2 contract runs", got)
	}
}
