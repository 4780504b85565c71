# mid (n): the caller's rbp kept in rbx while it calls leaf with rbp 0, and
# its CFI says so: main, built with a frame pointer, has an rbp-based CFA.
	.text
	.globl mid
	.type mid, @function
mid:
	.cfi_startproc
	movq %rbp, %rbx
	.cfi_register rbp, rbx
	xorl %ebp, %ebp
	subq $8, %rsp
	.cfi_def_cfa_offset 16
	call leaf
	addq $8, %rsp
	.cfi_def_cfa_offset 8
	movq %rbx, %rbp
	.cfi_restore rbp
	ret
	.cfi_endproc
	.size mid, .-mid
	.section .note.GNU-stack, "", @progbits
