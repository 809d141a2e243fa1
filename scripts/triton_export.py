#!/usr/bin/env python3
"""Launch a Triton kernel once; write its PTX and a ptxprop binding skeleton.

Needs a machine with a CUDA GPU, torch and triton; nothing else (no Go).

A user's kernel:

    triton_export.py --module my_kernels.py --kernel rmsnorm_fwd \\
        --args "x, y, w, rstd, x.stride(0), y.stride(0), 1000, 1e-6" \\
        --setup "x = torch.randn(4, 1000, device='cuda'); y = torch.empty_like(x); \\
                 w = torch.randn(1000, device='cuda'); rstd = torch.empty(4, device='cuda')" \\
        --kwargs "BLOCK=1024" --grid "(4,)" --out-dir out/

writes out/<kernel>.ptx (the compiled kernel's asm['ptx']), out/<kernel>.skeleton.yaml
(a skeleton to complete: each .param of the .entry line in order with a
guessed role or a TODO, the arguments Triton specialised away, the hidden
trailing parameters it appends, block = num_warps*32, the dynamic shared
memory bytes) and out/<kernel>.meta.json (everything read off the compiled
kernel). The example arguments decide Triton's specialisations: an int
argument equal to 1 is compiled in as a constant and an int divisible by 16
is assumed divisible by 16 in every later launch, unless the kernel lists it
in do_not_specialize. Choose example values that are typical of the shapes
the binding will claim, and read the "specialised" notes in the skeleton.

--builtin rmsnorm exports this project's own Triton RMSNorm kernels
(binding/testdata/foreign/triton/rmsnorm.py) with complete bindings.
"""
import argparse
import importlib.util
import json
import os
import re
import sys

ROLE_GUESSES = {
    "x": "x", "x_ptr": "x", "input": "x", "inp": "x",
    "y": "y", "y_ptr": "y", "out": "y", "output": "y",
    "w": "gamma", "w_ptr": "gamma", "weight": "gamma", "gamma": "gamma", "g": "gamma",
    "b": "beta", "bias": "beta", "beta": "beta",
    "rstd": "rstd", "rstd_ptr": "rstd", "inv_rms": "rstd",
    "rms": "rms", "mean": "mean",
    "dy": "dy", "dy_ptr": "dy", "grad_out": "dy", "dout": "dy",
    "dx": "dx", "dx_ptr": "dx", "grad_in": "dx", "din": "dx",
    "dw": "dgamma", "dweight": "dgamma", "dgamma": "dgamma",
    "db": "dbeta", "dbias": "dbeta", "dbeta": "dbeta",
    "residual": "residual", "res": "residual",
    "eps": "eps", "epsilon": "eps",
    "n_cols": "hidden", "hidden": "hidden", "n": "hidden", "d": "hidden", "dim": "hidden",
    "n_rows": "rows", "rows": "rows", "m": "rows",
    "theta": "theta", "positions": "positions", "pos": "positions",
}


def log(*a):
    print("triton_export:", *a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- PTX

def parse_entries(ptx):
    """Every .entry of a PTX module: [(name, [param dict, ...])]."""
    out = []
    for m in re.finditer(r"\.entry\s+([\w$]+)\s*\(", ptx):
        depth, i = 1, m.end()
        while depth and i < len(ptx):
            depth += {"(": 1, ")": -1}.get(ptx[i], 0)
            i += 1
        body = ptx[m.end():i - 1]
        params = [parse_param(p) for p in body.split(",") if p.strip()]
        out.append((m.group(1), params))
    return out


def parse_param(text):
    toks = text.split()
    p = {"text": " ".join(toks), "name": toks[-1], "type": None, "ptr": False,
         "space": None, "param_align": None, "pointee_align": None, "array": None}
    a = re.fullmatch(r"([\w$]+)\[(\d+)\]", p["name"])
    if a:
        p["name"], p["array"] = a.group(1), int(a.group(2))
    i = 1
    while i < len(toks) - 1:
        t = toks[i]
        if t == ".ptr":
            p["ptr"] = True
        elif t in (".global", ".shared", ".const", ".local"):
            p["space"] = t[1:]
        elif t == ".align" and i + 1 < len(toks) - 1:
            # Before .ptr it aligns the parameter; after .ptr it states the
            # alignment of the data pointed to.
            p["pointee_align" if p["ptr"] else "param_align"] = int(toks[i + 1])
            i += 1
        elif re.fullmatch(r"\.(?:[subf]\d+|b\d+|pred)", t):
            p["type"] = t[1:]
        i += 1
    return p


# ---------------------------------------------------------------- compiled kernel

def jsonable(v):
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        if isinstance(v, dict):
            return {str(k): jsonable(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [jsonable(x) for x in v]
        return repr(v)


def metadata_dict(compiled):
    md = getattr(compiled, "metadata", None)
    if md is None:
        return {}
    if hasattr(md, "_asdict"):
        return dict(md._asdict())
    if isinstance(md, dict):
        return dict(md)
    return {k: getattr(md, k) for k in dir(md)
            if not k.startswith("_") and not callable(getattr(md, k))}


def launch_once(fn, grid, args, kwargs):
    """Launch fn once; return its CompiledKernel (Triton 3.x returns it
    from a launch; warmup is the fallback)."""
    import torch
    res = fn[grid](*args, **kwargs)
    torch.cuda.synchronize()
    if res is not None and hasattr(res, "asm"):
        return res
    log("the launch returned", type(res).__name__, "; compiling through warmup")
    return fn.warmup(*args, grid=grid, **kwargs)


def arg_names(fn):
    names = getattr(fn, "arg_names", None)
    if names:
        return list(names)
    return [p.name for p in fn.params]


def specialisation(fn, compiled, args, kwargs):
    """Per argument of fn: {name, kind, value?, passed, notes}. kind is
    'constexpr', 'specialised' (an int compiled in as a constant) or
    'runtime'; passed says whether it is a .param of the PTX entry."""
    names = arg_names(fn)
    values = dict(zip(names, args))
    values.update(kwargs)
    src = getattr(compiled, "src", None)
    sig = dict(getattr(src, "signature", None) or {})
    consts = getattr(src, "constexprs", None)
    if consts is None:
        consts = getattr(src, "constants", None)
    consts = dict(consts or {})
    attrs = dict(getattr(src, "attrs", None) or {})
    log("signature:", sig)
    log("constants:", consts)
    log("attrs:", attrs)

    def key_index(k):
        if isinstance(k, tuple) and len(k) == 1 and isinstance(k[0], int):
            return k[0]
        if isinstance(k, int):
            return k
        if isinstance(k, str) and k in names:
            return names.index(k)
        return None

    const_idx = {key_index(k): v for k, v in consts.items()}
    attr_idx = {}
    for k, v in attrs.items():
        attr_idx.setdefault(key_index(k), []).extend(v if isinstance(v, list) else [v])
    params = {p.name: p for p in getattr(fn, "params", [])}
    out = []
    for i, n in enumerate(names):
        p = params.get(n)
        ty = sig.get(n, sig.get(i))
        e = {"name": n, "index": i, "type": ty, "notes": []}
        if p is not None and getattr(p, "is_constexpr", False):
            e["kind"], e["value"] = "constexpr", values.get(n, const_idx.get(i))
        elif i in const_idx or ty == "constexpr":
            e["kind"], e["value"] = "specialised", const_idx.get(i, values.get(n))
            e["notes"].append("Triton compiled its value %r in as a constant" % (e["value"],))
        else:
            e["kind"] = "runtime"
        for a in attr_idx.get(i, []):
            if isinstance(a, (list, tuple)) and len(a) == 2 and a[0] == "tt.divisibility":
                e["divisibility"] = a[1]
                e["notes"].append("assumed divisible by %d%s" % (
                    a[1], " (bytes: pointer alignment)" if str(ty).startswith("*") else ""))
            else:
                e["notes"].append("attribute %r" % (a,))
        e["passed"] = e["kind"] == "runtime"
        out.append(e)
    if not sig:
        # No source signature to read: fall back to Triton's rules.
        for e in out:
            v = values.get(e["name"])
            p = params.get(e["name"])
            nospec = p is not None and getattr(p, "do_not_specialize", False)
            if e["kind"] == "runtime" and isinstance(v, int) and not isinstance(v, bool) and v == 1 and not nospec:
                e["kind"], e["value"], e["passed"] = "specialised", 1, False
                e["notes"].append("int equal to 1: Triton compiles it in (guessed; no signature found)")
    return out


def describe(fn, grid, args, kwargs):
    """Launch fn once and read everything the binding needs off the
    compiled kernel."""
    import torch
    import triton
    compiled = launch_once(fn, grid, args, kwargs)
    if hasattr(compiled, "_init_handles"):
        try:
            compiled._init_handles()
        except Exception as e:  # loading is only needed for n_regs
            log("could not load the module for n_regs:", e)
    ptx = compiled.asm["ptx"]
    md = metadata_dict(compiled)
    log("asm keys:", sorted(compiled.asm.keys()))
    log("metadata:", {k: md[k] for k in sorted(md)})
    entries = parse_entries(ptx)
    if len(entries) != 1:
        raise SystemExit("triton_export: expected one .entry in the PTX, found %d" % len(entries))
    entry, ptx_params = entries[0]
    target = re.search(r"^\s*\.target\s+(\S+)", ptx, re.M)
    args_info = specialisation(fn, compiled, args, kwargs)
    passed = [a for a in args_info if a["passed"]]
    if len(passed) > len(ptx_params):
        raise SystemExit("triton_export: %d run-time arguments but the .entry has %d parameters; "
                         "cannot map them" % (len(passed), len(ptx_params)))
    hidden_names = []
    if md.get("global_scratch_size") is not None:
        hidden_names.append("global scratch pointer (global_scratch_size %s)" % md.get("global_scratch_size"))
    if md.get("profile_scratch_size") is not None:
        hidden_names.append("profile scratch pointer (profile_scratch_size %s)" % md.get("profile_scratch_size"))
    mapped = []
    for i, p in enumerate(ptx_params):
        if i < len(passed):
            mapped.append(dict(p, arg=passed[i]["name"], arg_type=passed[i]["type"],
                               notes=passed[i]["notes"]))
        else:
            j = i - len(passed)
            what = hidden_names[j] if j < len(hidden_names) else "hidden parameter appended by Triton"
            mapped.append(dict(p, arg=None, hidden=what))
    g = tuple(grid) + (1,) * (3 - len(tuple(grid)))
    info = {
        "entry": entry,
        "target": target.group(1) if target else None,
        "num_warps": md.get("num_warps"),
        "num_ctas": md.get("num_ctas"),
        "shared": md.get("shared"),
        "n_regs": getattr(compiled, "n_regs", None),
        "n_spills": getattr(compiled, "n_spills", None),
        "example_grid": list(g),
        "arguments": args_info,
        "params": mapped,
        "metadata": jsonable(md),
        "versions": {"triton": triton.__version__, "torch": torch.__version__,
                     "cuda": torch.version.cuda,
                     "device": torch.cuda.get_device_name(),
                     "capability": list(torch.cuda.get_device_capability())},
        "approx_instructions": sorted(set(re.findall(
            r"\b(?:div|rcp|sqrt|rsqrt|ex2|lg2|sin|cos|tanh)\.(?:approx|full)[\w.]*", ptx))),
    }
    log("entry %s: %d .params (%d from arguments, %d hidden), num_warps %s, shared %s bytes, target %s" % (
        entry, len(ptx_params), len(passed), len(ptx_params) - len(passed), info["num_warps"],
        info["shared"], info["target"]))
    return ptx, info


# ---------------------------------------------------------------- YAML

def q(s):
    return json.dumps(s)  # a JSON string is a valid YAML scalar


def skeleton(name, ptx_file, info, contract=None):
    """A binding skeleton for one launch; TODO where roles are unknown."""
    consts = {"num_warps": info["num_warps"]}
    for a in info["arguments"]:
        if a["kind"] == "constexpr" and isinstance(a.get("value"), (int, float)):
            consts[a["name"]] = a["value"]
    L = ["# Binding skeleton written by scripts/triton_export.py. Complete every TODO.",
         "# triton %s, torch %s, %s (sm_%d%d), PTX target %s" % (
             info["versions"]["triton"], info["versions"]["torch"], info["versions"]["device"],
             info["versions"]["capability"][0], info["versions"]["capability"][1], info["target"]),
         "# example launch: grid %s, num_warps %s, %s registers" % (
             info["example_grid"], info["num_warps"], info["n_regs"])]
    for a in info["arguments"]:
        if a["kind"] != "runtime":
            L.append("# %s argument %s = %r is not a .param" % (a["kind"], a["name"], a.get("value")))
        for n in a["notes"]:
            L.append("#   %s: %s" % (a["name"], n))
    if info["approx_instructions"]:
        L.append("# approximate instructions in the PTX: " + ", ".join(info["approx_instructions"]))
    L += ["ptxprop_binding: 1",
          "name: %s" % q(name),
          "contract: %s" % q(contract or "TODO: rmsnorm.forward | rmsnorm.backward | ..."),
          "ptx: %s" % q(ptx_file),
          "dtype: float32   # TODO: check the pointer element types below",
          "constants: {%s}" % ", ".join("%s: %s" % (k, v) for k, v in consts.items()),
          "constraints: [%s]   # TODO: what the shapes must satisfy, e.g. \"hidden <= BLOCK\"" % ", ".join(
              q("TODO: %s %% %d == 0 (Triton assumed it)" % (a["name"], a["divisibility"]))
              for a in info["arguments"]
              if a["kind"] == "runtime" and a.get("divisibility") and not str(a["type"]).startswith("*")),
          "launches:",
          "  - entry: %s" % info["entry"],
          "    grid: [%s]   # TODO: as expressions of rows, hidden; the example used %s" % (
              ", ".join(q("TODO") if v != 1 else "1" for v in info["example_grid"]), info["example_grid"]),
          "    block: [num_warps * 32, 1, 1]",
          "    shared: %s" % (info["shared"] if info["shared"] is not None else q("TODO")),
          "    params:"]
    for p in info["params"]:
        desc = ".param .%s%s %s" % (p["type"], " .ptr" if p["ptr"] else "", p["name"])
        if p.get("hidden"):
            L.append("      - {ignore: 0}   # %s: %s" % (desc, p["hidden"]))
            continue
        role = ROLE_GUESSES.get(p["arg"].lower())
        if role is None and p["arg"].lower().startswith("stride"):
            rest = p["arg"].lower()[len("stride"):].strip("_")
            role = "{stride: %s}" % ROLE_GUESSES.get(rest, "TODO")
        extra = "; ".join(p["notes"])
        L.append("      - %s   # %s <- argument %s (%s)%s" % (
            role if role else q("TODO: role of " + p["arg"]), desc, p["arg"], p["arg_type"],
            "; " + extra if extra else ""))
    return "\n".join(L) + "\n"


def write(out_dir, base, ptx, info, yaml_text=None):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, base + ".ptx"), "w") as f:
        f.write(ptx)
    with open(os.path.join(out_dir, base + ".meta.json"), "w") as f:
        json.dump(jsonable(info), f, indent=1, sort_keys=True)
        f.write("\n")
    if yaml_text is not None:
        with open(os.path.join(out_dir, base + ".skeleton.yaml"), "w") as f:
            f.write(yaml_text)
    log("wrote", os.path.join(out_dir, base) + ".{ptx,meta.json%s}" % (",skeleton.yaml" if yaml_text else ""))


# ---------------------------------------------------------------- built-in kernels

def load_module(path):
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    if spec is None:
        raise SystemExit("triton_export: cannot import %s" % path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def params_yaml(roles, info):
    """The params list of a launch from known roles, checked against the
    .entry parameters the export found."""
    if len(roles) != len(info["params"]):
        raise SystemExit("triton_export: %s has %d .params, the built-in binding lists %d" % (
            info["entry"], len(info["params"]), len(roles)))
    L = []
    for r, p in zip(roles, info["params"]):
        src = p["hidden"] if p.get("hidden") else "argument " + p["arg"]
        L.append("      - %s   # .param .%s%s (%s)" % (r, p["type"], " .ptr" if p["ptr"] else "", src))
    return L


def builtin_rmsnorm(out_dir, rows, hidden, arch=None):
    import torch
    import triton
    here = os.path.dirname(os.path.abspath(__file__))
    mod = load_module(os.path.join(here, "..", "binding", "testdata", "foreign", "triton", "rmsnorm.py"))
    block = triton.next_power_of_2(hidden)
    rpp, block_n = 4, 256
    nparts = triton.cdiv(rows, rpp)
    dev = "cuda"
    x = torch.randn(rows, hidden, device=dev)
    w = torch.randn(hidden, device=dev)
    y = torch.empty_like(x)
    rstd = torch.empty(rows, device=dev)
    dy = torch.randn_like(x)
    dx = torch.empty_like(x)
    part = torch.empty(nparts, hidden, device=dev)
    dw = torch.empty(hidden, device=dev)
    hdr = lambda info: ["# Written by scripts/triton_export.py --builtin rmsnorm: triton %s, torch %s, %s." % (
        info["versions"]["triton"], info["versions"]["torch"], info["versions"]["device"]),
        "# Kernels: binding/testdata/foreign/triton/rmsnorm.py."]

    ptx, fwd = describe(mod.rmsnorm_fwd_kernel, (rows,),
                        [x, y, w, rstd, x.stride(0), y.stride(0), hidden, 1e-6], {"BLOCK": block})
    if arch and fwd["target"] != arch:
        raise SystemExit("triton_export: the PTX targets %s, not %s" % (fwd["target"], arch))
    write(out_dir, "rmsnorm_fwd", ptx, fwd, skeleton("rmsnorm_fwd", "rmsnorm_fwd.ptx", fwd, "rmsnorm.forward"))
    ptx, bwd = describe(mod.rmsnorm_bwd_kernel, (nparts,),
                        [dy, x, w, rstd, dx, part, dy.stride(0), x.stride(0), dx.stride(0), rows, hidden, rpp],
                        {"BLOCK": block})
    write(out_dir, "rmsnorm_bwd", ptx, bwd)
    ptx, red = describe(mod.rmsnorm_dgamma_reduce_kernel, (triton.cdiv(hidden, block_n),),
                        [part, dw, nparts, hidden], {"BLOCK_N": block_n})
    write(out_dir, "rmsnorm_dgamma_reduce", ptx, red)
    ptx, zero = describe(mod.zero_kernel, (triton.cdiv(hidden, block_n),), [dw, hidden], {"BLOCK_N": block_n})
    write(out_dir, "zero", ptx, zero)
    ptx, atom = describe(mod.rmsnorm_bwd_atomic_kernel, (nparts,),
                         [dy, x, w, rstd, dx, dw, dy.stride(0), x.stride(0), dx.stride(0), rows, hidden, rpp],
                         {"BLOCK": block})
    write(out_dir, "rmsnorm_bwd_atomic", ptx, atom)

    def hidden_ignores(info):
        return ["{ignore: 0}"] * sum(1 for p in info["params"] if p.get("hidden"))

    # Complete bindings. BLOCK is a compile-time constant, so each PTX serves
    # hidden <= BLOCK; the rest are run-time arguments. Row offsets are
    # formed in 32-bit arithmetic (row * stride), hence rows * hidden < 2^31.
    L = hdr(fwd) + [
        "ptxprop_binding: 1", "name: triton-rmsnorm-fwd", "contract: rmsnorm.forward",
        "ptx: rmsnorm_fwd.ptx", "dtype: float32",
        "constants: {num_warps: %d, BLOCK: %d}" % (fwd["num_warps"], block),
        "constraints: [%s, %s]" % (q("hidden <= BLOCK"), q("rows * hidden <= 2147483647")), "saved: rstd", "launches:",
        "  - entry: %s" % fwd["entry"], "    grid: [rows, 1, 1]", "    block: [num_warps * 32, 1, 1]",
        "    shared: %s" % fwd["shared"], "    params:"]
    L += params_yaml(["x", "y", "gamma", "rstd", "{stride: x}", "{stride: y}", "hidden", "eps"]
                     + hidden_ignores(fwd), fwd)
    with open(os.path.join(out_dir, "rmsnorm_fwd.binding.yaml"), "w") as f:
        f.write("\n".join(L) + "\n")

    common = ["dtype: float32",
              "constants: {num_warps: %d, BLOCK: %d, BLOCK_N: %d, ROWS_PER_PROGRAM: %d}" % (
                  bwd["num_warps"], block, block_n, rpp),
              "constraints: [%s, %s]" % (q("hidden <= BLOCK"), q("rows * hidden <= 2147483647")), "saved: rstd"]
    bwd_roles = ["dy", "x", "gamma", "rstd", "dx"]
    strides = ["{stride: dy}", "{stride: x}", "{stride: dx}", "rows", "hidden", "{value: ROWS_PER_PROGRAM}"]
    L = hdr(bwd) + ["ptxprop_binding: 1", "name: triton-rmsnorm-bwd", "contract: rmsnorm.backward"] + common + [
        "launches:",
        "  - entry: %s" % bwd["entry"], "    ptx: rmsnorm_bwd.ptx",
        "    grid: [\"cdiv(rows, ROWS_PER_PROGRAM)\", 1, 1]", "    block: [num_warps * 32, 1, 1]",
        "    shared: %s" % bwd["shared"], "    params:"]
    L += params_yaml(bwd_roles + ["{scratch: partial}"] + strides + hidden_ignores(bwd), bwd)
    L += ["  - entry: %s" % red["entry"], "    ptx: rmsnorm_dgamma_reduce.ptx",
          "    grid: [\"cdiv(hidden, BLOCK_N)\", 1, 1]", "    block: [%d * 32, 1, 1]" % red["num_warps"],
          "    shared: %s" % red["shared"], "    params:"]
    L += params_yaml(["{scratch: partial}", "dgamma", "{value: \"cdiv(rows, ROWS_PER_PROGRAM)\"}", "hidden"]
                     + hidden_ignores(red), red)
    L += ["scratch:",
          "  - {name: partial, dtype: float32, size: %s, init: uninitialized}" % q(
              "cdiv(rows, ROWS_PER_PROGRAM) * hidden")]
    with open(os.path.join(out_dir, "rmsnorm_bwd.binding.yaml"), "w") as f:
        f.write("\n".join(L) + "\n")

    L = hdr(atom) + [
        "# dgamma is summed with float atomics: the order of the additions depends",
        "# on scheduling, so the determinism prediction must falsify this binding.",
        "ptxprop_binding: 1", "name: triton-rmsnorm-bwd-atomic", "contract: rmsnorm.backward"] + common + [
        "launches:",
        "  - entry: %s" % zero["entry"], "    ptx: zero.ptx",
        "    grid: [\"cdiv(hidden, BLOCK_N)\", 1, 1]", "    block: [%d * 32, 1, 1]" % zero["num_warps"],
        "    shared: %s" % zero["shared"], "    params:"]
    L += params_yaml(["dgamma", "hidden"] + hidden_ignores(zero), zero)
    L += ["  - entry: %s" % atom["entry"], "    ptx: rmsnorm_bwd_atomic.ptx",
          "    grid: [\"cdiv(rows, ROWS_PER_PROGRAM)\", 1, 1]", "    block: [num_warps * 32, 1, 1]",
          "    shared: %s" % atom["shared"], "    params:"]
    L += params_yaml(bwd_roles + ["dgamma"] + strides + hidden_ignores(atom), atom)
    with open(os.path.join(out_dir, "rmsnorm_bwd_atomic.binding.yaml"), "w") as f:
        f.write("\n".join(L) + "\n")
    log("wrote the bindings rmsnorm_fwd, rmsnorm_bwd, rmsnorm_bwd_atomic (.binding.yaml) for hidden <=", block)


# ---------------------------------------------------------------- CLI

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--module", help="Python file that defines the @triton.jit kernel")
    ap.add_argument("--kernel", help="name of the kernel in the module")
    ap.add_argument("--setup", default="", help="Python statements run first (torch and triton imported; "
                                                "the module is 'mod')")
    ap.add_argument("--args", default="", help="the positional arguments, a Python expression list")
    ap.add_argument("--kwargs", default="", help="keyword arguments (constexprs, num_warps=...), e.g. \"BLOCK=1024\"")
    ap.add_argument("--grid", help="the launch grid, a Python tuple, e.g. \"(rows,)\"")
    ap.add_argument("--name", help="base name of the output files (default: the kernel's name)")
    ap.add_argument("--contract", help="the contract the kernel claims, if known")
    ap.add_argument("--out-dir", default=".", help="where to write (default: .)")
    ap.add_argument("--arch", help="fail unless the PTX targets this architecture (e.g. sm_90a)")
    ap.add_argument("--builtin", choices=["rmsnorm"], help="export this project's own Triton kernels")
    ap.add_argument("--rows", type=int, default=64, help="rows of the built-in example launch")
    ap.add_argument("--hidden", type=int, default=1000, help="hidden of the built-in example launch")
    a = ap.parse_args(argv)
    try:
        import torch
        import triton
    except ImportError as e:
        print("triton_export: needs torch and triton: %s" % e, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("triton_export: no CUDA device: the kernel must be launched once to be compiled", file=sys.stderr)
        return 2
    if a.builtin:
        builtin_rmsnorm(a.out_dir, a.rows, a.hidden, a.arch)
        return 0
    if not (a.module and a.kernel and a.grid):
        print("triton_export: --module, --kernel and --grid are required (or --builtin)", file=sys.stderr)
        return 2
    mod = load_module(a.module)
    fn = getattr(mod, a.kernel, None)
    if fn is None or not hasattr(fn, "__getitem__"):
        print("triton_export: %s has no Triton kernel %r" % (a.module, a.kernel), file=sys.stderr)
        return 2
    env = {"torch": torch, "triton": triton, "mod": mod}
    exec(a.setup, env)
    args = list(eval("[%s]" % a.args, env))
    kwargs = eval("dict(%s)" % a.kwargs, env)
    grid = eval(a.grid, env)
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    ptx, info = describe(fn, grid, args, kwargs)
    if a.arch and info["target"] != a.arch:
        print("triton_export: the PTX targets %s, not %s (compile on a GPU of that architecture)" % (
            info["target"], a.arch), file=sys.stderr)
        return 1
    base = a.name or a.kernel
    write(a.out_dir, base, ptx, info, skeleton(base, base + ".ptx", info, a.contract))
    return 0


if __name__ == "__main__":
    sys.exit(main())
