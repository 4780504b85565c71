/* Handing libelf a file someone else made, its header's counts checked
 * first.
 *
 * libelf believes the header: elf_begin allocates and fills a descriptor
 * for every section the header counts, elf_getphdrnum and gelf_getphdr a
 * copy of every program header, and the counts may be 2^32 through the
 * extended numbering (e_shnum 0 and e_phnum PN_XNUM, the real count in
 * section 0).  A sparse file of 8 KB on disk that a user mapped executable
 * made root's profiler take 6.4 GB (20 million sections, about 320 bytes
 * each) or 1.07 GB (20 million program headers).  So every ELF file the
 * profiler did not make itself is opened with st_elf_begin_untrusted:
 * counts past what any linked program has are refused before libelf
 * reads them.  */
#pragma once

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/why.h"

/* The kernel loads no program whose program headers take more than
   64 KiB (fs/binfmt_elf.c: load_elf_phdrs): 1,170 of ELF64's.  */
#define ST_ELF_MAX_PROGRAM_HEADER_BYTES 65536
/* Linked programs and their debug files have tens of sections; only
   relocatable objects built with -ffunction-sections have thousands, and
   nothing maps those.  */
#define ST_ELF_MAX_SECTIONS 4096

/* 0 when FD is not an ELF file, or is one whose header counts at most
   ST_ELF_MAX_SECTIONS sections and ST_ELF_MAX_PROGRAM_HEADER_BYTES of
   program headers, and whose section name table is not compressed (libelf
   would inflate it whole at the first name asked); else -E2BIG, and WHY
   (may be NULL) says which.  For a descriptor handed to libdwfl too, which
   begins its own Elf.  */
int st_elf_check_header (int fd, struct st_why *why);
/* The same for an ELF file in memory (libdwfl's elf_memory of an image it
   inflated): EHDR holds its first EHDR_LEN bytes (the header: 64 are
   enough), SECTION0 (may be NULL) SECTION0_LEN bytes at the offset
   st_elf_header_section0_at gives, where the count of sections is when
   the header's is 0 (UINT64_MAX: not needed, or no ELF header).  */
int st_elf_check_header_bytes (const unsigned char *ehdr, size_t ehdr_len,
                               const unsigned char *section0, size_t section0_len,
                               struct st_why *why);
uint64_t st_elf_header_section0_at (const unsigned char *ehdr, size_t len);
/* Where the ELF header EHDR (LEN bytes) says its section headers are, and
   how many bytes ST_ELF_MAX_SECTIONS of them take; false when it has none
   (or EHDR is no ELF header).  */
bool st_elf_header_section_table (const unsigned char *ehdr, size_t len, uint64_t *at,
                                  size_t *bytes);
/* -E2BIG, WHY saying so, when one of the section headers in TABLE
   (TABLE_LEN bytes, from the offset above) is marked compressed: for an
   image whose sections are inflated on demand with no bound of ours.  */
int st_elf_check_no_compressed (const unsigned char *ehdr, size_t len,
                                const unsigned char *table, size_t table_len,
                                struct st_why *why);
/* st_elf_check_header, then *ELF gets libelf's Elf of FD (NULL when
 * libelf fails: not an ELF file) and 0 is returned; -E2BIG (or -errno:
 * FD cannot be mapped) and *ELF NULL when the check fails.
 *
 * The owner of the file may rewrite it at any time: a header that passed
 * the check and said a million sections when libelf read it again would
 * undo the check, and so would a compressed section's size that a bound
 * counted.  So the file is mapped private, and the pages of what libelf
 * reads again after a check are first replaced in the mapping by
 * anonymous pages holding a copy read then (nothing done to the file
 * later reaches them: not a write, not a truncation, which takes back a
 * private mapping's copy-on-write pages): every byte the check reads, the
 * section and program header tables, the section name table (at most
 * 64 KiB), the first 24 bytes of each compressed section (at most 32) and
 * a .gnu_debugdata (at most ST_ELF_MAX_FROZEN).  libelf reads that mapping
 * (elf_memory).  Other section contents follow the file: libelf and libdw
 * bound what they read of them by the copied section sizes.  A file with
 * more than those bounds, or whose copy fails, is refused (-E2BIG, -EIO).
 * End the Elf with st_elf_end_untrusted, which unmaps it.  */
int st_elf_begin_untrusted (int fd, Elf **elf, struct st_why *why);
/* elf_end of an Elf from st_elf_begin_untrusted (NULL: nothing), and the
   mapping's munmap when that was the last reference.  */
void st_elf_end_untrusted (Elf *elf);
/* A .gnu_debugdata (MiniDebugInfo) at most this big is copied with the
   header (libdwfl inflates it whole after our bound counted it); a larger
   one follows the file, and is not to be read.  */
#define ST_ELF_MAX_FROZEN ((size_t) 8 << 20)
