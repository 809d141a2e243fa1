package properties_test

import (
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
)

// ptxprop's own kernels, each checked by its contracts: the same three lines
// a user writes for their own PTX.

func TestRMSNormForward(t *testing.T) {
	t.Parallel()
	properties.RMSNormForwardContract(t, kernels.RMSNormFwd)
}

func TestEpsParity(t *testing.T) {
	t.Parallel()
	properties.EpsParityContract(t, kernels.RMSNormFwd)
}

func TestRMSNormBackwardWarp32(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardWarpContract(t, kernels.RMSNormBwdWarp32)
}

func TestRMSNormBackwardRowWarp(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardContract(t, kernels.RMSNormBwdWarp)
}

func TestRMSNormBackwardChunk(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardContract(t, kernels.RMSNormBwdChunk)
}

func TestRMSNormBackwardRowWarpFD(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardFDContract(t, kernels.RMSNormBwdWarp)
}

func TestRMSNormBackwardChunkFD(t *testing.T) {
	t.Parallel()
	properties.RMSNormBackwardFDContract(t, kernels.RMSNormBwdChunk)
}

func TestDeterminismRowWarp(t *testing.T) {
	t.Parallel()
	properties.DeterminismContract(t, kernels.RMSNormBwdWarp)
}

func TestDeterminismChunk(t *testing.T) {
	t.Parallel()
	properties.DeterminismContract(t, kernels.RMSNormBwdChunk)
}

func TestDimIndependence(t *testing.T) {
	t.Parallel()
	properties.DimIndependenceContract(t, kernels.RMSNormFwd)
}

func TestFusedResidualRMSNorm(t *testing.T) {
	t.Parallel()
	properties.FusedResidualRMSNormContract(t, kernels.FusedResidualRMSNormFwd)
}

func TestRoPEThetaCacheShared(t *testing.T) {
	t.Parallel()
	properties.RoPEThetaCacheContract(t, kernels.RoPEFwd, properties.SharedPosition)
}

func TestRoPEThetaCacheBatched(t *testing.T) {
	t.Parallel()
	properties.RoPEThetaCacheContract(t, kernels.RoPEFwdBatched, properties.PerRowPositions)
}

func TestRoPEBasis(t *testing.T) {
	t.Parallel()
	properties.RoPEBasisContract(t, kernels.RoPEFwdBatched, properties.PerRowPositions, kernels.RoPEBwd)
}

func TestRoPEBackward(t *testing.T) {
	t.Parallel()
	properties.RoPEBackwardContract(t, kernels.RoPEBwd)
}

func TestLayerNormForward(t *testing.T) {
	t.Parallel()
	properties.LayerNormForwardContract(t, kernels.LayerNormFwd)
}

func TestLayerNormBackward(t *testing.T) {
	t.Parallel()
	properties.LayerNormBackwardContract(t, kernels.LayerNormBwd)
}

func TestLayerNormShift(t *testing.T) {
	t.Parallel()
	properties.LayerNormShiftContract(t, kernels.LayerNormFwd)
}

func TestLayerNormMoments(t *testing.T) {
	t.Parallel()
	properties.LayerNormMomentsContract(t, kernels.LayerNormFwd)
}

func TestPerHeadRMSNorm(t *testing.T) {
	t.Parallel()
	properties.PerHeadRMSNormContract(t, kernels.PerHeadRMSNormFwd)
}

func TestPerHeadIndependence(t *testing.T) {
	t.Parallel()
	properties.PerHeadIndependenceContract(t, kernels.PerHeadRMSNormFwd)
}

// ours lists every row-wise implementation for the metamorphic predictions.
var ours = properties.Impls{
	kernels.RMSNormFwd, kernels.FusedResidualRMSNormFwd, kernels.LayerNormFwd, kernels.PerHeadRMSNormFwd,
	kernels.RoPEFwdBatched, kernels.RoPEBwd, kernels.RMSNormBwdChunk, kernels.LayerNormBwd,
}

func TestBatchIndependence(t *testing.T) {
	t.Parallel()
	properties.BatchIndependenceContract(t, ours)
}

func TestRowPermutation(t *testing.T) {
	t.Parallel()
	properties.RowPermutationContract(t, ours)
}

func TestScaleInvariance(t *testing.T) {
	t.Parallel()
	properties.ScaleInvarianceContract(t, kernels.RMSNormFwd)
}

func TestRobustness(t *testing.T) {
	t.Parallel()
	properties.RobustnessContract(t, kernels.RMSNormFwd, kernels.RMSNormBwdChunk)
}

func TestParity(t *testing.T) {
	t.Parallel()
	properties.ParityContract(t, ours)
}

func TestOracleSoundness(t *testing.T) {
	t.Parallel()
	properties.OracleSoundnessContract(t)
}

func TestOracleGradient(t *testing.T) {
	t.Parallel()
	properties.OracleGradientContract(t)
}
