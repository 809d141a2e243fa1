#!/usr/bin/env python3
"""Compress the tables mufuprobe wrote: OUTDIR/<name>.u32 (raw little-endian
uint32, one entry per key) become OUTDIR/<name>.d1.xz, the xz of the int32
first differences of the entries (entry 0 as itself), which a smooth
function's table turns into small numbers. Lossless: the cumulative sum
modulo 2^32 gives the table back.

    python3 mufutables.py OUTDIR
"""
import glob
import lzma
import os
import sys

import numpy as np

d = sys.argv[1]
for p in sorted(glob.glob(os.path.join(d, "*.u32"))):
    t = np.fromfile(p, dtype="<u4")
    diff = np.diff(t.astype(np.int64), prepend=0).astype(np.int64)
    d1 = (diff & 0xFFFFFFFF).astype("<u4")
    assert np.array_equal(np.cumsum(d1.astype(np.uint64)).astype(np.uint32), t)
    out = p[:-4] + ".d1.xz"
    with open(out, "wb") as f:
        f.write(lzma.compress(d1.tobytes(), preset=9 | lzma.PRESET_EXTREME))
    print(f"{os.path.basename(p)}: {len(t)} entries, {os.path.getsize(out)} bytes compressed")
