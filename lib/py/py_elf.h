/*
 * py_elf.h — just enough ELF64 to find CPython's exported data symbols
 * (_PyRuntime, Py_Version, PyCode_Type …) in an executable or libpython
 * without running it (docs/design/cpython.md §1), and to read version strings from
 * its read-only data.
 *
 * The file is mapped read-only and every offset is checked against its
 * size: a damaged or hostile file gives "not found", never a crash.
 */
#ifndef TRC_LIB_PY_ELF_H
#define TRC_LIB_PY_ELF_H

#include <stddef.h>
#include <stdint.h>

typedef struct pyelf {
    const uint8_t *data;
    size_t size;
    uint64_t load_vaddr;     /* first PT_LOAD p_vaddr, page aligned */
    uint64_t dev, ino, mtime_ns; /* the file's identity, for pyelf_version_string's memo */
    int force_dynamic;       /* test hook: ignore section headers */
    int no_resident_scan;    /* test hook: version scan of the whole file only */
    int gnu_hash_only;       /* test hook: symbols through DT_GNU_HASH alone */
    int no_memo;             /* test hook: version scan without the memo */
} pyelf;

/* Maps path.  0, or -1 with a message in err ("not an ELF64 file", or
 * strerror of open/mmap).  Free with pyelf_close. */
int pyelf_open(pyelf *e, const char *path, char *err, size_t errlen);
void pyelf_close(pyelf *e);

/* Value (link-time virtual address) of a defined symbol: first through
 * PT_DYNAMIC's DT_GNU_HASH table (the pages the dynamic loader itself
 * used, so already in memory: no disk read on a busy disk), then in
 * .dynsym and .symtab through the section headers, or through
 * PT_DYNAMIC (DT_SYMTAB/DT_STRTAB with DT_HASH or DT_GNU_HASH for the
 * count) when the file has no section headers.  0 if found, else -1. */
int pyelf_symbol(const pyelf *e, const char *name, uint64_t *value);

/* Link-time address and size of the allocated section called name (a
 * section header names it; CPython places _PyRuntime in a ".PyRuntime"
 * section of its own, which outlives strip), and its initial contents in
 * the mapped file (*bytes, size bytes; NULL when the file holds none).
 * 0, or -1 when there is no such section or no section headers. */
int pyelf_section(const pyelf *e, const char *name, uint64_t *addr, uint64_t *size,
                  const uint8_t **bytes);

/* 1 if the file has any symbol table to look in (a .dynsym or .symtab
 * section with entries, or a DT_SYMTAB), 0 if it has none (a stripped,
 * statically linked executable). */
int pyelf_has_symbols(const pyelf *e);

/* Whether PT_DYNAMIC lists a DT_NEEDED whose name starts with prefix. */
int pyelf_needs(const pyelf *e, const char *prefix);

/* Finds a NUL-delimited string "3.<minor>.<patch>[abrc N][+]" in the
 * file's read-only data (PY_VERSION as compiled into getversion.c).
 * minor < 0 accepts any 3.x.  Writes it to out; 0 if exactly one
 * distinct such string was found (or several, all for the wanted
 * minor: the first is taken), else -1.  For a known minor the pages
 * already in the page cache are looked at first (py_elf.c).  Answers
 * are remembered per file (device, inode, size, mtime) and minor: an
 * attach retried while an interpreter starts scans its file once. */
int pyelf_version_string(const pyelf *e, int minor, char *out, size_t outlen);

#endif
