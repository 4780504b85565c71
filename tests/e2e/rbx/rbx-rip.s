# mid (n): its return address popped into rbx while it calls leaf, and its
# CFI says so (the return address column is rbx): a caller's frame only an
# rbx known in mid's frame unwinds.
	.text
	.globl mid
	.type mid, @function
mid:
	.cfi_startproc
	popq %rbx
	.cfi_def_cfa_offset 0
	.cfi_register rip, rbx
	subq $8, %rsp
	.cfi_def_cfa_offset 8
	call leaf
	addq $8, %rsp
	.cfi_def_cfa_offset 0
	pushq %rbx
	.cfi_def_cfa_offset 8
	.cfi_offset rip, -8
	ret
	.cfi_endproc
	.size mid, .-mid
	.section .note.GNU-stack, "", @progbits
