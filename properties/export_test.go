package properties

// The oracle's self-tests, for kernels_test.go: they check no
// implementation, so they are not contracts a user calls.
var (
	OracleSoundnessContract = oracleSoundnessContract
	OracleGradientContract  = oracleGradientContract
)

// FloatAtomicSite is floatAtomicSite, for the parity tests.
var FloatAtomicSite = floatAtomicSite
