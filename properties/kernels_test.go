package properties_test

import (
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// ptxprop's own kernels, each checked by its contracts: the same three lines
// a user writes for their own PTX.

func TestRMSNormForward(t *testing.T) {
	t.Parallel()
	properties.RMSNormForwardContract(suite.T(t), kernels.RMSNormFwd)
}

func TestEpsParity(t *testing.T) {
	t.Parallel()
	properties.EpsParityContract(suite.T(t), kernels.RMSNormFwd)
}

func TestRMSNormBackwardWarp32(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardWarpContract(suite.T(t), kernels.RMSNormBwdWarp32)
}

func TestRMSNormBackwardRowWarp(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardContract(suite.T(t), kernels.RMSNormBwdWarp)
}

func TestRMSNormBackwardChunk(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardContract(suite.T(t), kernels.RMSNormBwdChunk)
}

func TestRMSNormBackwardRowWarpFD(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardFDContract(suite.T(t), kernels.RMSNormBwdWarp)
}

func TestRMSNormBackwardChunkFD(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardFDContract(suite.T(t), kernels.RMSNormBwdChunk)
}

func TestDimIndependence(t *testing.T) {
	t.Parallel()
	properties.DimIndependenceContract(suite.T(t), kernels.RMSNormFwd)
}

func TestFusedResidualRMSNorm(t *testing.T) {
	t.Parallel()
	properties.FusedResidualRMSNormContract(suite.T(t), kernels.FusedResidualRMSNormFwd)
}

func TestRoPEThetaCacheShared(t *testing.T) {
	t.Parallel()
	properties.RoPEThetaCacheContract(suite.T(t), kernels.RoPEFwd, properties.SharedPosition)
}

func TestRoPEThetaCacheBatched(t *testing.T) {
	t.Parallel()
	properties.RoPEThetaCacheContract(suite.T(t), kernels.RoPEFwdBatched, properties.PerRowPositions)
}

func TestRoPEBasis(t *testing.T) {
	t.Parallel()
	properties.RoPEBasisContract(suite.T(t), kernels.RoPEFwdBatched, properties.PerRowPositions, kernels.RoPEBwd)
}

func TestRoPEBackward(t *testing.T) {
	t.Parallel()
	properties.RoPEBackwardContract(suite.T(t), kernels.RoPEBwd)
}

func TestLayerNormForward(t *testing.T) {
	t.Parallel()
	properties.LayerNormForwardContract(suite.T(t), kernels.LayerNormFwd)
}

func TestLayerNormBackward(t *testing.T) {
	t.Parallel()
	properties.LayerNormBackwardContract(suite.T(t), kernels.LayerNormBwd)
}

func TestLayerNormShift(t *testing.T) {
	t.Parallel()
	properties.LayerNormShiftContract(suite.T(t), kernels.LayerNormFwd)
}

func TestLayerNormMoments(t *testing.T) {
	t.Parallel()
	properties.LayerNormMomentsContract(suite.T(t), kernels.LayerNormFwd)
}

func TestPerHeadRMSNorm(t *testing.T) {
	t.Parallel()
	properties.PerHeadRMSNormContract(suite.T(t), kernels.PerHeadRMSNormFwd)
}

func TestPerHeadIndependence(t *testing.T) {
	t.Parallel()
	properties.PerHeadIndependenceContract(suite.T(t), kernels.PerHeadRMSNormFwd)
}

func TestSoftmaxForward(t *testing.T) {
	t.Parallel()
	properties.SoftmaxForwardContract(suite.T(t), kernels.SoftmaxFwd)
}

func TestSoftmaxBackward(t *testing.T) {
	t.Parallel()
	properties.SoftmaxBackwardContract(suite.T(t), kernels.SoftmaxBwd)
}

func TestSoftmaxShift(t *testing.T) {
	t.Parallel()
	properties.SoftmaxShiftContract(suite.T(t), kernels.SoftmaxFwd)
}

func TestSoftmaxSum(t *testing.T) {
	t.Parallel()
	properties.SoftmaxSumContract(suite.T(t), kernels.SoftmaxFwd)
}

// ours returns our implementations the prediction id runs on
// (properties.Subjects over kernels.Implementations): for the predictions
// over every (row-wise) operation, one or more of each, derived.
func ours(id string) properties.Impls {
	p, ok := properties.Lookup(id)
	if !ok {
		panic("no prediction " + id)
	}
	var im properties.Impls
	for _, s := range properties.Subjects(p, kernels.Implementations()) {
		im = append(im, s.Subject.Impl)
	}
	return im
}

func TestBatchIndependence(t *testing.T) {
	t.Parallel()
	properties.BatchIndependenceContract(suite.T(t), ours(properties.BatchIndependence))
}

func TestRowPermutation(t *testing.T) {
	t.Parallel()
	properties.RowPermutationContract(suite.T(t), ours(properties.RowPermutation))
}

// Bit determinism holds of every operation: one contract run over every
// family, both batched designs of rmsnorm.backward included.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	properties.DeterminismContract(suite.T(t), ours(properties.Determinism))
}

func TestScaleInvariance(t *testing.T) {
	t.Parallel()
	properties.ScaleInvarianceContract(suite.T(t), kernels.RMSNormFwd)
}

func TestRobustness(t *testing.T) {
	t.Parallel()
	properties.RobustnessContract(suite.T(t), kernels.RMSNormFwd, kernels.RMSNormBwdChunk)
}

func TestParity(t *testing.T) {
	t.Parallel()
	properties.ParityContract(suite.T(t), ours(properties.Parity))
}

func TestDeviceParity(t *testing.T) {
	t.Parallel()
	properties.DeviceParityContract(suite.T(t), ours(properties.Parity))
}

func TestOracleSoundness(t *testing.T) {
	t.Parallel()
	properties.OracleSoundnessContract(suite.T(t))
}

func TestOracleGradient(t *testing.T) {
	t.Parallel()
	properties.OracleGradientContract(suite.T(t))
}
