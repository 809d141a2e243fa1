#!/usr/bin/env python3
"""Compare divprobe's GPU results with candidate models of div.full.f32.

    divanalyse.py DIR [RESULT_DIR]

DIR holds divprobe's output. Prints, per candidate model and per input
category, how many div.full.f32 (and .ftz, div.approx) results it matches
bit for bit, the largest ulp distance of the rest and examples; writes
RESULT_DIR/divfull_results.json, RESULT_DIR/specials.md (the table of special
operands) and RESULT_DIR/mufu_rcp_delta.bin.gz (the hardware reciprocal of
every float in [1, 2) as the int8 difference of its bit pattern from the
correctly rounded 1/y, mantissa order).

The models are written with numpy float32 arithmetic (round to nearest
even, subnormals kept), plus explicit flushing where a step is .ftz.
"""
import json
import gzip
import os
import sys

import numpy as np

CATS = ["normal N(0,1)", "random bits", "x normal*2^k, y log-uniform", "|y| in [2^125,2^128)",
        "|y| in [2^-149,2^-124)", "quotient near subnormal/overflow", "x = 1", "x close to y", "specials grid"]
F = np.float32
U = np.uint32
TWO126 = F(2.0 ** 126)
TWOM126 = F(2.0 ** -126)
TWO24 = F(2.0 ** 24)


def bits(a):
    return np.ascontiguousarray(a, dtype=F).view(U)


def fl(b):
    return np.ascontiguousarray(b, dtype=U).view(F)


def isnan_b(b):
    return (b & U(0x7fffffff)) > U(0x7f800000)


def same(a, b):
    ba, bb = bits(a), bits(b)
    return (ba == bb) | (isnan_b(ba) & isnan_b(bb))


def ordv(b):
    b = b.astype(np.int64)
    return np.where(b & 0x80000000, -(b & 0x7fffffff), b)


def ulp(a, b):
    ba, bb = bits(a), bits(b)
    d = np.abs(ordv(ba) - ordv(bb))
    return np.where(isnan_b(ba) | isnan_b(bb), -1, d)


def ftz(a):
    a = np.asarray(a, dtype=F)
    return np.where((np.abs(a) < TWOM126) & (a != 0), np.copysign(F(0), a), a).astype(F)


class Mufu:
    """MUFU.RCP (rcp.approx.ftz.f32) from the measured table of [1, 2)."""

    def __init__(self, tab_ftz):
        self.t = bits(tab_ftz)

    def __call__(self, y, sub="flush"):
        y = np.asarray(y, dtype=F)
        u = bits(y)
        s = u & U(0x80000000)
        e = ((u >> U(23)) & U(255)).astype(np.int64)
        m = u & U(0x7fffff)
        t = self.t[m]
        te = ((t >> U(23)) & U(255)).astype(np.int64) + 127 - e
        normal = (e >= 1) & (e <= 254)
        out = np.zeros(u.shape, dtype=U)
        ok = normal & (te >= 1) & (te <= 254)
        out[ok] = s[ok] | (te[ok].astype(U) << U(23)) | (t[ok] & U(0x7fffff))
        small = normal & (te < 1)  # 1/y below the normal range
        if sub == "flush":
            out[small] = s[small]
        else:  # round the table value into the subnormal range
            v = np.ldexp(fl(t[small]).astype(np.float64), (127 - e[small]).astype(np.int32))
            out[small] = s[small] | bits(np.abs(v).astype(F))
        zero = (e == 0)  # zero and subnormal inputs (flushed): +-inf
        out[zero] = s[zero] | U(0x7f800000)
        inf = (e == 255) & (m == 0)
        out[inf] = s[inf]
        nan = (e == 255) & (m != 0)
        out[nan] = U(0x7fffffff)
        return fl(out)


def tiny_after_rounding(p64):
    """|p64| rounded to 24 bits with an unbounded exponent is below 2^-126
    (IEEE tininess after rounding); p64 is an exact float64 product."""
    scaled = (p64 * 2.0 ** 64).astype(F)  # exact scaling, then one rounding to 24 bits
    return (np.abs(scaled) < F(2.0 ** -62)) & (p64 != 0)


def mul(a, b, ftz_in=False, ftz_out=False, flush_before_round=False, tininess=False):
    a = np.asarray(a, dtype=F)
    b = np.asarray(b, dtype=F)
    if ftz_in:
        a, b = ftz(a), ftz(b)
    with np.errstate(all="ignore"):
        p = (a * b).astype(F)
        if ftz_out:
            if tininess:
                exact = a.astype(np.float64) * b.astype(np.float64)
                p = np.where(tiny_after_rounding(exact), np.copysign(F(0), p), p).astype(F)
            elif flush_before_round:
                exact = a.astype(np.float64) * b.astype(np.float64)
                tiny = (np.abs(exact) < 2.0 ** -126) & (exact != 0)
                p = np.where(tiny, np.copysign(F(0), p), p).astype(F)
            else:
                p = ftz(p)
    return p


def div_full_model(x, y, rcp, ftz_mode=False, lo_scale=True, gt=True, flush_before_round=False, tininess=False):
    """div.full.f32 as ptxas emits it for sm_90:
         if |y| > 2^126:  x *= 0.25, y *= 0.25
         if |y| < 2^-126: x *= 2^24, y *= 2^24   (not in the .ftz form)
         d = MUFU.RCP(y) * x                     (.ftz: every FMUL flushes)"""
    with np.errstate(all="ignore"):
        ay = np.abs(ftz(y) if ftz_mode else y)
        big = (ay > TWO126) if gt else (ay >= TWO126)
        x1 = np.where(big, mul(x, F(0.25), ftz_mode, ftz_mode, flush_before_round, tininess), x).astype(F)
        y1 = np.where(big, mul(y, F(0.25), ftz_mode, ftz_mode, flush_before_round, tininess), y).astype(F)
        if lo_scale and not ftz_mode:
            tiny = ay < TWOM126  # GEU false: ordered and less
            x1 = np.where(tiny, mul(x1, TWO24), x1).astype(F)
            y1 = np.where(tiny, mul(y1, TWO24), y1).astype(F)
        r = rcp(y1)
        return mul(r, x1, ftz_mode, ftz_mode, flush_before_round, tininess)


def div_approx_model(x, y, rcp, ftz_mode=False):
    with np.errstate(all="ignore"):
        if ftz_mode:
            return mul(rcp(y), x, True, True, tininess=True)
        tiny = np.abs(y) < TWOM126
        x1 = np.where(tiny, mul(x, TWO24), x).astype(F)
        y1 = np.where(tiny, mul(y, TWO24), y).astype(F)
        return mul(rcp(y1), x1)


def rcp_approx_model(y, rcp):  # rcp.approx.f32 (not .ftz), as ptxas emits it
    ay = np.abs(y)
    s = np.where(ay < TWOM126, TWO24, F(1)).astype(F)
    s = np.where(ay > TWO126, F(0.25), s).astype(F)
    return mul(s, rcp(mul(y, s)))


def rn_div(x, y):
    with np.errstate(all="ignore"):
        return (x.astype(np.float64) / y.astype(np.float64)).astype(F)


def describe(name, model, gpu, x, y, cat, res, show=8):
    ok = same(model, gpu)
    n_bad = int((~ok).sum())
    d = ulp(model, gpu)
    per = {}
    for c in range(len(CATS)):
        sel = cat == c
        if sel.any():
            per[CATS[c]] = [int((ok & sel).sum()), int(sel.sum())]
    r = {"match": int(ok.sum()), "total": int(ok.size), "mismatch": n_bad,
         "max_ulp": int(d[~ok].max()) if n_bad else 0, "per_category": per}
    if n_bad:
        idx = np.nonzero(~ok)[0]
        ey = ((bits(y[idx]) >> U(23)) & U(255)).astype(np.int64) - 127
        r["mismatch_y_exponent_hist"] = {str(k): int(v) for k, v in zip(*np.unique(ey, return_counts=True))}
        gq = np.abs(gpu[idx].astype(np.float64))
        r["mismatch_result_range"] = {
            "zero": int((gq == 0).sum()), "subnormal": int(((gq > 0) & (gq < 2.0 ** -126)).sum()),
            "normal": int(((gq >= 2.0 ** -126) & np.isfinite(gq)).sum()), "inf/nan": int((~np.isfinite(gq)).sum())}
        r["ulp_hist"] = {str(k): int(v) for k, v in zip(*np.unique(np.minimum(d[idx], 99), return_counts=True))}
        r["examples"] = [{"x": "%08x" % bits(x[i:i + 1])[0], "y": "%08x" % bits(y[i:i + 1])[0],
                          "x_val": float(x[i]), "y_val": float(y[i]), "cat": CATS[cat[i]],
                          "gpu": "%08x" % bits(gpu[i:i + 1])[0], "model": "%08x" % bits(model[i:i + 1])[0]}
                         for i in idx[:show]]
    res[name] = r
    print("  %-46s %10d / %d match, %8d differ, max ulp %s" % (name, r["match"], r["total"], n_bad, r["max_ulp"]),
          flush=True)
    return r


def main():
    d = sys.argv[1]
    outd = sys.argv[2] if len(sys.argv) > 2 else d
    x = np.fromfile(os.path.join(d, "x.bin"), dtype=F)
    y = np.fromfile(os.path.join(d, "y.bin"), dtype=F)
    cat = np.fromfile(os.path.join(d, "cat.bin"), dtype=np.uint8)
    n = x.size
    o = np.fromfile(os.path.join(d, "out.bin"), dtype=F).reshape(8, n)
    full, full_ftz, approx, approx_ftz, rn, rcpa, rcpaf, rcprn = o
    tab = np.fromfile(os.path.join(d, "rcp_tab.bin"), dtype=F).reshape(2, 1 << 23)
    edge = np.fromfile(os.path.join(d, "rcp_edge.bin"), dtype=F).reshape(6, 2, 1 << 23)
    res = {"pairs": int(n), "categories": {CATS[c]: int((cat == c).sum()) for c in range(len(CATS))}}
    mufu = Mufu(tab[1])

    # --- MUFU.RCP over [1, 2)
    m = np.arange(1 << 23, dtype=U)
    one_m = fl(U(127 << 23) | m)
    rn1 = (1.0 / one_m.astype(np.float64)).astype(F)
    delta = bits(tab[1]).astype(np.int64) - bits(rn1).astype(np.int64)
    vals, cnts = np.unique(delta, return_counts=True)
    res["mufu_rcp_table"] = {"delta_from_rn_hist": {str(int(v)): int(c) for v, c in zip(vals, cnts)},
                             "rcp_approx_equals_ftz_on_[1,2)": bool(np.array_equal(bits(tab[0]), bits(tab[1])))}
    print("MUFU.RCP on [1,2): bits - bits(rn(1/y)) histogram:", res["mufu_rcp_table"]["delta_from_rn_hist"])
    if delta.min() >= -128 and delta.max() <= 127:
        with gzip.GzipFile(os.path.join(outd, "mufu_rcp_delta.bin.gz"), "wb", compresslevel=9, mtime=0) as f:
            f.write(delta.astype(np.int8).tobytes())
    # a few properties that would give a closed form
    exact_rn = delta == 0
    res["mufu_rcp_table"]["first_mismatches"] = ["%06x" % int(i) for i in np.nonzero(~exact_rn)[0][:20]]

    # --- rcp edges: exponents 0, 1, 2, 252, 253, 254
    edge_res = {}
    for k, e in enumerate([0, 1, 2, 252, 253, 254]):
        yy = fl(U(e << 23) | m)
        ra, raf = edge[k]
        edge_res[str(e)] = {
            "ftz_vs_table_flush": int((~same(mufu(yy), raf)).sum()),
            "ftz_vs_table_round_subnormal": int((~same(mufu(yy, sub="round"), raf)).sum()),
            "nonftz_vs_scaled_model": int((~same(rcp_approx_model(yy, mufu), ra)).sum()),
            "ftz_vs_rn": int((~same((1.0 / yy.astype(np.float64)).astype(F), raf)).sum()),
        }
    res["rcp_edges_mismatch_counts"] = edge_res
    print("rcp edge exponents (mismatch counts of 2^23):", edge_res)
    cnt = np.loadtxt(os.path.join(d, "rcp_counts.txt"), dtype=np.int64)
    res["rcp_exhaustive_totals"] = {
        "a!=rn": int(cnt[:, 2].sum()), "af!=rn": int(cnt[:, 3].sum()), "max_ulp_a": int(cnt[:, 4].max()),
        "max_ulp_af": int(cnt[:, 5].max()), "table_model_applicable": int(cnt[:, 6].sum()),
        "a!=table_model": int(cnt[:, 7].sum()), "af!=table_model": int(cnt[:, 8].sum()),
        "a_nan_noncanonical": int(cnt[:, 9].sum()), "a!=af": int(cnt[:, 10].sum())}
    res["rcp_exhaustive_af_ne_model_by_exp"] = {"%d:%d" % (r[0], r[1]): int(r[8]) for r in cnt if r[8]}
    print("rcp exhaustive:", res["rcp_exhaustive_totals"])

    # --- sanity: div.rn is the correctly rounded quotient
    print("div.rn.f32 vs float64 quotient rounded:", int(same(rn, rn_div(x, y)).sum()), "/", n)
    res["div_rn_is_correctly_rounded"] = int(same(rn, rn_div(x, y)).sum())

    # --- per-pair rcp models
    print("rcp per pair:")
    pr = res.setdefault("rcp_per_pair", {})
    describe("rcp.approx.ftz vs MUFU table", mufu(y), rcpaf, x, y, cat, pr)
    describe("rcp.approx vs scaled MUFU table", rcp_approx_model(y, mufu), rcpa, x, y, cat, pr)
    describe("rcp.approx.ftz vs rn(1/y)", rcprn, rcpaf, x, y, cat, pr)

    cands = {
        "(a) correctly rounded x/y": lambda: rn,
        "(b) x * rn(1/y)": lambda: mul(x, rcprn),
        "(c) x * rcp.approx.ftz(y), no scaling": lambda: mul(mufu(y), x),
        "(c2) x * rcp.approx(y) (GPU values)": lambda: mul(rcpa, x),
        "(d) sm_90 sequence: scale, MUFU.RCP, FMUL": lambda: div_full_model(x, y, mufu),
        "(d') same, |y| >= 2^126 scaled": lambda: div_full_model(x, y, mufu, gt=False),
        "(d'') same, no 2^24 scaling of tiny y": lambda: div_full_model(x, y, mufu, lo_scale=False),
        "(e) sequence with rn(1/y') for MUFU": lambda: div_full_model(
            x, y, lambda v: (1.0 / np.asarray(v, F).astype(np.float64)).astype(F)),
    }
    print("div.full.f32:")
    res["div.full.f32"] = {}
    for name, f in cands.items():
        describe(name, f(), full, x, y, cat, res["div.full.f32"])
    print("div.full.ftz.f32:")
    res["div.full.ftz.f32"] = {}
    describe("(a) correctly rounded x/y", rn, full_ftz, x, y, cat, res["div.full.ftz.f32"])
    describe("(d) ftz sequence, flush after rounding", div_full_model(x, y, mufu, ftz_mode=True), full_ftz, x, y,
             cat, res["div.full.ftz.f32"])
    describe("(d) ftz sequence, flush if tiny after rounding",
             div_full_model(x, y, mufu, ftz_mode=True, tininess=True), full_ftz, x, y, cat,
             res["div.full.ftz.f32"])
    describe("(d) ftz sequence, flush before rounding",
             div_full_model(x, y, mufu, ftz_mode=True, flush_before_round=True), full_ftz, x, y, cat,
             res["div.full.ftz.f32"])
    print("div.approx.f32:")
    res["div.approx.f32"] = {}
    describe("(c) scale tiny y by 2^24, MUFU.RCP, FMUL", div_approx_model(x, y, mufu), approx, x, y, cat,
             res["div.approx.f32"])
    describe("div.full vs div.approx", full, approx, x, y, cat, res["div.approx.f32"], show=4)
    res["div.approx.ftz.f32"] = {}
    describe("(c) MUFU.RCP, FMUL.FTZ (tiny after rounding)", div_approx_model(x, y, mufu, ftz_mode=True), approx_ftz, x, y, cat,
             res["div.approx.ftz.f32"])
    # accuracy of div.full against the exact quotient
    dd = ulp(full, rn)
    fin = (dd >= 0) & np.isfinite(rn) & (np.abs(rn) >= TWOM126)
    res["div.full_vs_exact_ulp_hist_normal_results"] = {
        str(k): int(v) for k, v in zip(*np.unique(np.minimum(dd[fin], 99), return_counts=True))}
    print("div.full vs correctly rounded, ulp histogram (normal results):",
          res["div.full_vs_exact_ulp_hist_normal_results"])

    # specials table
    sel = np.nonzero(cat == 8)[0]
    model = div_full_model(x[sel], y[sel], mufu)
    rows = ["| x | y | div.full | model | div.full.ftz | div.approx | div.rn |", "|---|---|---|---|---|---|---|"]
    for j, i in enumerate(sel):
        cells = [x[i], y[i], full[i], model[j], full_ftz[i], approx[i], rn[i]]
        rows.append("| " + " | ".join("%s (%08x)" % (repr(float(v)), bits(np.array([v]))[0]) for v in cells) + " |")
    with open(os.path.join(outd, "specials.md"), "w") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(outd, "divfull_results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print("divanalyse: wrote", outd)


if __name__ == "__main__":
    main()
