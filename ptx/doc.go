// Package ptx parses and prints NVIDIA PTX assembly, the virtual ISA that nvcc
// emits and the CUDA driver compiles.
//
// Parse turns PTX text into a Module: the header (.version, .target,
// .address_size), module-scope variables (initialised .global and .const
// arrays, .shared and .extern .shared declarations), and functions (.entry
// kernels and .func device functions) whose bodies are lists of statements:
// instructions, labels, nested blocks, scoped declarations and pragmas.
// Debug directives (.file, .loc, .section .debug_*) and comments are skipped;
// they do not change what a program computes.
//
// The AST is plain exported data so that tools can inspect and rewrite
// programs: an Instruction is an opcode, its dot-modifiers in source order
// ("ld" with ["global", "nc", "f32"]), an optional guard predicate and its
// operands. Print writes a Module back as PTX; Parse(Print(m)) yields a
// program equal to m (Equal ignores source line numbers), which is what the
// round-trip test checks for every .ptx file in the repository.
//
// Conventions: names keep their sigils ("%r1", "%tid.x", "$L__BB0_2");
// modifiers are stored without their leading dot; integer immediates are
// int64 (a u64 literal above MaxInt64 wraps); float immediates keep their
// IEEE bits. Errors name the line (and the offending opcode for unknown
// instructions); nothing in this package panics on bad input.
package ptx
