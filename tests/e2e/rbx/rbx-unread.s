# mid (n): keeps its frame in rbx (its CFA is rbx-based) and calls hold,
# whose CFI the unwind-rule cache cannot use (a register rule), which calls
# spin.  spin saves rbx below the stack pointer, where a sample's stack
# copy does not reach, before it changes rbx: unwinding spin's frame loses
# rbx for want of that word, not for libdw's ABI rules, and mid's CFA
# cannot be computed.  Nothing must take the rbx of the frames below for
# mid's.
	.text
	.globl mid
	.type mid, @function
mid:
	.cfi_startproc
	pushq %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset rbx, -16
	movq %rsp, %rbx
	.cfi_def_cfa_register rbx
	andq $-16, %rsp
	call hold
	movq %rbx, %rsp
	.cfi_def_cfa_register rsp
	popq %rbx
	.cfi_def_cfa_offset 8
	.cfi_restore rbx
	ret
	.cfi_endproc
	.size mid, .-mid

	.globl hold
	.type hold, @function
hold:
	.cfi_startproc
	subq $8, %rsp
	.cfi_def_cfa_offset 16
	.cfi_register r13, r14
	call spin
	addq $8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size hold, .-hold

	.globl spin
	.type spin, @function
spin:
	.cfi_startproc
	movq %rbx, -8(%rsp)
	.cfi_offset rbx, -16
	movq %rsp, %rbx
	xorl %ecx, %ecx
1:	incq %rcx
	cmpq %rdi, %rcx
	jb 1b
	movq -8(%rsp), %rbx
	.cfi_restore rbx
	ret
	.cfi_endproc
	.size spin, .-spin
	.section .note.GNU-stack, "", @progbits
