#!/bin/sh
# A ptxprop property run split over a Slurm job array: one task a shard.
# Slurm sets SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and
# SLURM_ARRAY_TASK_COUNT (the shard) and SLURM_ARRAY_JOB_ID (the run
# identity every shard shares); ptxprop reads them. Submit from a checkout
# with bin/ built (make gpu-bin):
#   sbatch --array=0-3 deploy/slurm-array.sh
# and merge when the array has ended:
#   sbatch --dependency=afterany:<jobid> --wrap \
#     'bin/ptxprop merge -o out/shards/<jobid>/merged.json out/shards/<jobid>/shard-*.json'
#SBATCH --job-name=ptxprop
#SBATCH --gres=gpu:1
#SBATCH --time=01:00:00
#SBATCH --output=slurm-ptxprop-%A_%a.log
set -eu
out="$PWD/out/shards/$SLURM_ARRAY_JOB_ID"
mkdir -p "$out"
cd properties
exec ../bin/properties.test -test.timeout=0 \
	-ptxprop.checks="${CHECKS:-10000}" \
	-ptxprop.faildb="${FAILDB:-$PWD/../out/faildb}" \
	-ptxprop.report="$out/shard-$SLURM_ARRAY_TASK_ID.json"
