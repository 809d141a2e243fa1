package properties

import (
	"testing"

	"github.com/ptxprop/ptxprop/properties/gen"
)

// A run without a device draws under the emulator's limits.
func TestLimitsWithoutADevice(t *testing.T) {
	if lim := (&Config{}).Limits(); lim != gen.EmuLimits {
		t.Fatalf("limits without a device = %+v, want gen.EmuLimits", lim)
	}
}

// A prediction's regimes reach its contracts' limits (LimitsFor) and no
// other prediction's, and the run's caps bound them: a row cap of 64 (what
// falsify once imposed) leaves none.
func TestLimitsForCarriesRegimes(t *testing.T) {
	c := &Config{}
	if rs := c.LimitsFor(BRMSBack).Regimes(); len(rs) != len(rowSumRegimes) {
		t.Fatalf("%s: regimes %+v, want %d", BRMSBack, rs, len(rowSumRegimes))
	}
	if rs := c.LimitsFor(RMSFwd).Regimes(); len(rs) != 0 {
		t.Errorf("%s declares no regime, got %+v", RMSFwd, rs)
	}
	for _, r := range c.LimitsFor(LNBackward).Regimes() {
		if r.Odds == 0 && (r.MaxElements < 1<<20 || r.MaxRows*r.MaxHidden < 1<<20) {
			t.Errorf("%s: regime %+v does not reach 2²⁰ elements", LNBackward, r)
		}
	}
	c.EverydayMaxRows = 64
	if lim := c.LimitsFor(BRMSBack); lim.MaxRows != 64 || len(lim.Regimes()) != len(rowSumRegimes) {
		t.Errorf("64 everyday rows: %d rows, regimes %+v, want 64 and every regime", lim.MaxRows, lim.Regimes())
	}
	c.MaxRows = 64
	if rs := c.LimitsFor(BRMSBack).Regimes(); len(rs) != 1 || rs[0].Name != RegimeWideChunk.Name {
		t.Errorf("at most 64 rows: regimes %+v, want %q alone (up to %d rows)", rs, RegimeWideChunk.Name, RegimeWideChunk.MaxRows)
	}
}
