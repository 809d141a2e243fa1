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

// ours lists every row-wise implementation for the metamorphic predictions.
var ours = properties.Impls{
	kernels.RMSNormFwd, kernels.FusedResidualRMSNormFwd, kernels.LayerNormFwd, kernels.PerHeadRMSNormFwd,
	kernels.RoPEFwdBatched, kernels.RoPEBwd, kernels.RMSNormBwdChunk, kernels.LayerNormBwd,
	kernels.SoftmaxFwd, kernels.SoftmaxBwd,
}

func TestBatchIndependence(t *testing.T) {
	t.Parallel()
	properties.BatchIndependenceContract(suite.T(t), ours)
}

func TestRowPermutation(t *testing.T) {
	t.Parallel()
	properties.RowPermutationContract(suite.T(t), ours)
}

// Bit determinism holds of every operation: one contract run over every
// family, as for batch independence, and one for the row-warp backward,
// the other design of rmsnorm.backward.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	properties.DeterminismContract(suite.T(t), ours)
}

func TestDeterminismRowWarp(t *testing.T) {
	t.Parallel()
	properties.DeterminismContract(suite.T(t), properties.Impls{kernels.RMSNormBwdWarp})
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
	properties.ParityContract(suite.T(t), ours)
}

func TestDeviceParity(t *testing.T) {
	t.Parallel()
	properties.DeviceParityContract(suite.T(t), ours)
}

func TestOracleSoundness(t *testing.T) {
	t.Parallel()
	properties.OracleSoundnessContract(suite.T(t))
}

func TestOracleGradient(t *testing.T) {
	t.Parallel()
	properties.OracleGradientContract(suite.T(t))
}
