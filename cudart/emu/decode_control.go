package emu

import (
	"github.com/ptxprop/ptxprop/ptx"
)

func (d *decoder) decodeBra(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	if err := d.nops(pin, 1); err != nil {
		return in, err
	}
	if ops[0].Kind != ptx.Name {
		return in, d.errf("bra to %v", ops[0])
	}
	target, ok := d.cur.labels[ops[0].Name]
	if !ok {
		return in, d.errf("unknown label %s", ops[0].Name)
	}
	in.kind, in.target = kBra, target
	return in, nil
}

func (d *decoder) decodeBrx(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	return in, d.errf("brx.idx (indirect branch) is not supported")
}

func (d *decoder) decodeExit(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	in.kind = kExit
	return in, nil
}

func (d *decoder) decodeRet(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	in.kind = kExit
	if !d.cur.entry {
		in.kind = kRet
	}
	return in, nil
}

func (d *decoder) decodeTrap(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	in.kind = kTrap
	return in, nil
}

func (d *decoder) decodeCall(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	var rets, args *ptx.Operand
	name := ""
	for i := range pin.Operands {
		o := &pin.Operands[i]
		switch {
		case o.Kind == ptx.List && name == "":
			rets = o
		case o.Kind == ptx.Name && name == "":
			name = o.Name
		case o.Kind == ptx.List:
			args = o
		default:
			return in, d.errf("indirect calls and call prototypes are not supported")
		}
	}
	callee := d.funcs[name]
	if callee == nil {
		return in, d.errf("call of unknown function %s", name)
	}
	ci := &callInfo{target: callee.start, name: name}
	bind := func(list *ptx.Operand, formals []symbol, isArg bool) error {
		var n int
		if list != nil {
			n = len(list.Elems)
		}
		if n != len(formals) {
			return d.errf("%s has %d parameters of this kind, the call passes %d", name, len(formals), n)
		}
		for i := 0; i < n; i++ {
			o := list.Elems[i]
			e := sc.lookup(o.Name)
			if o.Kind != ptx.Name || e == nil || e.kind != eSym || e.sym.space != spLocal {
				return d.errf("call argument %v is not a .param variable of the call site", o)
			}
			c := frameCopy{from: e.sym.addr, to: formals[i].addr, n: min(e.sym.size, formals[i].size)}
			if !isArg {
				c = frameCopy{from: formals[i].addr, to: e.sym.addr, n: min(e.sym.size, formals[i].size)}
				ci.rets = append(ci.rets, c)
			} else {
				ci.args = append(ci.args, c)
			}
		}
		return nil
	}
	if err := bind(args, callee.params, true); err != nil {
		return in, err
	}
	if err := bind(rets, callee.returns, false); err != nil {
		return in, err
	}
	in.kind, in.call = kCall, ci
	return in, nil
}
