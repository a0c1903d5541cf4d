/*
 * py_elf.c — ELF64 symbol lookup and version-string scan (py_elf.h).
 *
 * Only little-endian ELF64 is accepted (x86-64, aarch64).  All reads
 * go through in_file() so a truncated or crafted file cannot make us
 * read outside the mapping.
 */
#include "lib/py/py_elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE (1ull << 32)

static int in_file(const pyelf *e, uint64_t off, uint64_t len)
{
    return off <= e->size && len <= e->size - off;
}

/* In the file and aligned for a struct of that alignment (the mapping
 * itself is page aligned). */
static int in_file_al(const pyelf *e, uint64_t off, uint64_t len, uint64_t align)
{
    return (off & (align - 1)) == 0 && in_file(e, off, len);
}

static const Elf64_Ehdr *ehdr(const pyelf *e)
{
    return (const Elf64_Ehdr *)e->data;
}

static const Elf64_Phdr *phdr(const pyelf *e, int i)
{
    const Elf64_Ehdr *h = ehdr(e);
    uint64_t off = h->e_phoff + (uint64_t)i * h->e_phentsize;
    if (h->e_phentsize < sizeof(Elf64_Phdr) || !in_file_al(e, off, sizeof(Elf64_Phdr), 8))
        return NULL;
    return (const Elf64_Phdr *)(e->data + off);
}

static const Elf64_Shdr *shdr(const pyelf *e, unsigned i)
{
    const Elf64_Ehdr *h = ehdr(e);
    uint64_t off = h->e_shoff + (uint64_t)i * h->e_shentsize;
    if (h->e_shoff == 0 || i >= h->e_shnum || h->e_shentsize < sizeof(Elf64_Shdr) ||
        !in_file_al(e, off, sizeof(Elf64_Shdr), 8))
        return NULL;
    return (const Elf64_Shdr *)(e->data + off);
}

int pyelf_open(pyelf *e, const char *path, char *err, size_t errlen)
{
    struct stat st;
    int fd = -1, rc = -1;
    void *map = MAP_FAILED;

    memset(e, 0, sizeof *e);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (st.st_size < (off_t)sizeof(Elf64_Ehdr) || (uint64_t)st.st_size > MAX_FILE) {
        snprintf(err, errlen, "%s: not an ELF64 file (size %lld)", path, (long long)st.st_size);
        goto out;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        goto out;
    }
    e->data = map;
    e->size = (size_t)st.st_size;
    e->dev = (uint64_t)st.st_dev;
    e->ino = (uint64_t)st.st_ino;
    e->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    const Elf64_Ehdr *h = ehdr(e);
    if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64 ||
        h->e_ident[EI_DATA] != ELFDATA2LSB) {
        snprintf(err, errlen, "%s: not a little-endian ELF64 file", path);
        goto out;
    }
    e->load_vaddr = UINT64_MAX;
    for (int i = 0; i < h->e_phnum; i++) {
        const Elf64_Phdr *p = phdr(e, i);
        if (p && p->p_type == PT_LOAD) {
            uint64_t align = p->p_align > 1 ? p->p_align : 4096;
            e->load_vaddr = p->p_vaddr & ~(align - 1);
            break;
        }
    }
    if (e->load_vaddr == UINT64_MAX) {
        snprintf(err, errlen, "%s: ELF file has no PT_LOAD segment", path);
        goto out;
    }
    rc = 0;
out:
    if (rc != 0 && map != MAP_FAILED) {
        munmap(map, (size_t)st.st_size);
        e->data = NULL;
        e->size = 0;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

void pyelf_close(pyelf *e)
{
    if (e->data)
        munmap((void *)e->data, e->size);
    e->data = NULL;
    e->size = 0;
}

/* Linear search of a symbol table; strtab bounds-checked. */
static int search_table(const pyelf *e, uint64_t symoff, uint64_t count, uint64_t stroff,
                        uint64_t strsize, const char *name, uint64_t *value)
{
    size_t nlen = strlen(name);

    if (count > e->size / sizeof(Elf64_Sym) || !in_file_al(e, symoff, count * sizeof(Elf64_Sym), 8) ||
        !in_file(e, stroff, strsize))
        return -1;
    const Elf64_Sym *sym = (const Elf64_Sym *)(e->data + symoff);
    const char *str = (const char *)e->data + stroff;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t n = sym[i].st_name;
        if (sym[i].st_shndx == SHN_UNDEF || n >= strsize || strsize - n <= nlen)
            continue;
        if (memcmp(str + n, name, nlen + 1) == 0) {
            *value = sym[i].st_value;
            return 0;
        }
    }
    return -1;
}

static int by_sections(const pyelf *e, uint32_t type, const char *name, uint64_t *value)
{
    const Elf64_Ehdr *h = ehdr(e);

    for (unsigned i = 0; i < h->e_shnum; i++) {
        const Elf64_Shdr *s = shdr(e, i);
        if (!s || s->sh_type != type || s->sh_entsize != sizeof(Elf64_Sym))
            continue;
        const Elf64_Shdr *str = shdr(e, s->sh_link);
        if (!str || str->sh_type != SHT_STRTAB)
            continue;
        if (search_table(e, s->sh_offset, s->sh_size / sizeof(Elf64_Sym), str->sh_offset,
                         str->sh_size, name, value) == 0)
            return 0;
    }
    return -1;
}

/* Virtual address -> file offset through the PT_LOAD segments. */
static int vaddr_to_off(const pyelf *e, uint64_t va, uint64_t *off)
{
    const Elf64_Ehdr *h = ehdr(e);

    for (int i = 0; i < h->e_phnum; i++) {
        const Elf64_Phdr *p = phdr(e, i);
        if (p && p->p_type == PT_LOAD && va >= p->p_vaddr && va - p->p_vaddr < p->p_filesz) {
            *off = p->p_offset + (va - p->p_vaddr);
            return 0;
        }
    }
    return -1;
}

typedef struct dyninfo {
    uint64_t symtab, strtab, strsz, hash, gnu_hash;
    const Elf64_Dyn *dyn;
    uint64_t ndyn;
} dyninfo;

static int read_dynamic(const pyelf *e, dyninfo *d)
{
    const Elf64_Ehdr *h = ehdr(e);

    memset(d, 0, sizeof *d);
    for (int i = 0; i < h->e_phnum; i++) {
        const Elf64_Phdr *p = phdr(e, i);
        if (!p || p->p_type != PT_DYNAMIC)
            continue;
        if (!in_file_al(e, p->p_offset, p->p_filesz, 8))
            return -1;
        d->dyn = (const Elf64_Dyn *)(e->data + p->p_offset);
        d->ndyn = p->p_filesz / sizeof(Elf64_Dyn);
        for (uint64_t k = 0; k < d->ndyn && d->dyn[k].d_tag != DT_NULL; k++) {
            uint64_t v = d->dyn[k].d_un.d_ptr;
            switch (d->dyn[k].d_tag) {
            case DT_SYMTAB: d->symtab = v; break;
            case DT_STRTAB: d->strtab = v; break;
            case DT_STRSZ: d->strsz = v; break;
            case DT_HASH: d->hash = v; break;
            case DT_GNU_HASH: d->gnu_hash = v; break;
            default: break;
            }
        }
        return 0;
    }
    return -1;
}

/* Number of .dynsym entries from DT_HASH (nchain) or DT_GNU_HASH
 * (highest symbol index reachable from a bucket, then its chain). */
static int dyn_count(const pyelf *e, const dyninfo *d, uint64_t *count)
{
    uint64_t off;

    if (d->hash && vaddr_to_off(e, d->hash, &off) == 0 && in_file_al(e, off, 8, 4)) {
        *count = ((const uint32_t *)(e->data + off))[1];
        return 0;
    }
    if (!d->gnu_hash || vaddr_to_off(e, d->gnu_hash, &off) != 0 || !in_file_al(e, off, 16, 4))
        return -1;
    const uint32_t *g = (const uint32_t *)(e->data + off);
    uint32_t nbuckets = g[0], symoffset = g[1], bloom_size = g[2];
    uint64_t buckets_off = off + 16 + (uint64_t)bloom_size * 8;
    if (!in_file(e, buckets_off, (uint64_t)nbuckets * 4))
        return -1;
    const uint32_t *buckets = (const uint32_t *)(e->data + buckets_off);
    uint64_t chain_off = buckets_off + (uint64_t)nbuckets * 4;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (buckets[b] > last)
            last = buckets[b];
    if (last < symoffset) {
        *count = symoffset;
        return 0;
    }
    for (;;) {
        uint64_t at = chain_off + (uint64_t)(last - symoffset) * 4;
        if (!in_file(e, at, 4))
            return -1;
        if (*(const uint32_t *)(e->data + at) & 1)
            break;
        last++;
    }
    *count = (uint64_t)last + 1;
    return 0;
}

static int by_dynamic(const pyelf *e, const char *name, uint64_t *value)
{
    dyninfo d;
    uint64_t symoff, stroff, count;

    if (read_dynamic(e, &d) != 0 || !d.symtab || !d.strtab || !d.strsz)
        return -1;
    if (vaddr_to_off(e, d.symtab, &symoff) != 0 || vaddr_to_off(e, d.strtab, &stroff) != 0 ||
        dyn_count(e, &d, &count) != 0)
        return -1;
    return search_table(e, symoff, count, stroff, d.strsz, name, value);
}

/* The GNU hash function (the dynamic loader's). */
static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = h * 33 + *p;
    return h;
}

/* Lookup through DT_GNU_HASH: 0 found, 1 not defined, -1 no usable
 * table (then the caller searches linearly). */
static int by_gnu_hash(const pyelf *e, const char *name, uint64_t *value)
{
    dyninfo d;
    uint64_t off, symoff, stroff;

    if (read_dynamic(e, &d) != 0 || !d.gnu_hash || !d.symtab || !d.strtab || !d.strsz ||
        vaddr_to_off(e, d.gnu_hash, &off) != 0 || vaddr_to_off(e, d.symtab, &symoff) != 0 ||
        vaddr_to_off(e, d.strtab, &stroff) != 0 || !in_file_al(e, off, 16, 8) ||
        !in_file(e, stroff, d.strsz))
        return -1;
    const uint32_t *g = (const uint32_t *)(e->data + off);
    uint32_t nbuckets = g[0], symoffset = g[1], bloom_size = g[2], shift = g[3];
    uint64_t bloom_off = off + 16, buckets_off = bloom_off + (uint64_t)bloom_size * 8;
    uint64_t chain_off = buckets_off + (uint64_t)nbuckets * 4;
    if (nbuckets == 0 || bloom_size == 0 || (bloom_size & (bloom_size - 1)) || shift >= 64 ||
        !in_file(e, bloom_off, (uint64_t)bloom_size * 8) || !in_file(e, buckets_off, (uint64_t)nbuckets * 4))
        return -1;
    uint32_t h = gnu_hash(name);
    const uint64_t *bloom = (const uint64_t *)(e->data + bloom_off);
    uint64_t word = bloom[(h / 64) & (bloom_size - 1)];
    if (!((word >> (h % 64)) & (word >> ((h >> shift) % 64)) & 1))
        return 1;
    uint32_t i = ((const uint32_t *)(e->data + buckets_off))[h % nbuckets];
    if (i == 0)
        return 1;
    if (i < symoffset)
        return -1;
    size_t nlen = strlen(name);
    for (uint32_t steps = 0; steps < (1u << 24); steps++, i++) {
        uint64_t at = chain_off + (uint64_t)(i - symoffset) * 4, so = symoff + (uint64_t)i * sizeof(Elf64_Sym);
        if (i < symoffset || !in_file(e, at, 4) || !in_file_al(e, so, sizeof(Elf64_Sym), 8))
            return -1;
        uint32_t c = *(const uint32_t *)(e->data + at);
        const Elf64_Sym *sym = (const Elf64_Sym *)(e->data + so);
        if ((c | 1) == (h | 1) && sym->st_shndx != SHN_UNDEF && sym->st_name < d.strsz &&
            d.strsz - sym->st_name > nlen &&
            memcmp(e->data + stroff + sym->st_name, name, nlen + 1) == 0) {
            *value = sym->st_value;
            return 0;
        }
        if (c & 1)
            return 1;
    }
    return -1;
}

int pyelf_symbol(const pyelf *e, const char *name, uint64_t *value)
{
    if (by_gnu_hash(e, name, value) == 0)
        return 0;
    if (e->gnu_hash_only)
        return -1;
    if (!e->force_dynamic && ehdr(e)->e_shnum > 0) {
        if (by_sections(e, SHT_DYNSYM, name, value) == 0 || by_sections(e, SHT_SYMTAB, name, value) == 0)
            return 0;
    }
    return by_dynamic(e, name, value);
}

int pyelf_section(const pyelf *e, const char *name, uint64_t *addr, uint64_t *size,
                  const uint8_t **bytes)
{
    const Elf64_Ehdr *h = ehdr(e);
    const Elf64_Shdr *names = shdr(e, h->e_shstrndx);
    size_t want = strlen(name) + 1;

    if (e->force_dynamic || !names || names->sh_type != SHT_STRTAB ||
        !in_file(e, names->sh_offset, names->sh_size))
        return -1;
    for (unsigned i = 0; i < h->e_shnum; i++) {
        const Elf64_Shdr *s = shdr(e, i);
        if (!s || !(s->sh_flags & SHF_ALLOC) || s->sh_type == SHT_NULL ||
            s->sh_name >= names->sh_size || names->sh_size - s->sh_name < want ||
            memcmp(e->data + names->sh_offset + s->sh_name, name, want) != 0)
            continue;
        *addr = s->sh_addr;
        *size = s->sh_size;
        *bytes = s->sh_type != SHT_NOBITS && in_file(e, s->sh_offset, s->sh_size)
                     ? e->data + s->sh_offset
                     : NULL;
        return 0;
    }
    return -1;
}

int pyelf_has_symbols(const pyelf *e)
{
    const Elf64_Ehdr *h = ehdr(e);
    dyninfo d;

    for (unsigned i = 0; i < h->e_shnum; i++) {
        const Elf64_Shdr *s = shdr(e, i);
        if (s && (s->sh_type == SHT_SYMTAB || s->sh_type == SHT_DYNSYM) &&
            s->sh_size >= 2 * sizeof(Elf64_Sym))
            return 1;   /* entry 0 is always the null symbol */
    }
    return read_dynamic(e, &d) == 0 && d.symtab != 0;
}

int pyelf_needs(const pyelf *e, const char *prefix)
{
    dyninfo d;
    uint64_t stroff;

    if (read_dynamic(e, &d) != 0 || !d.strtab || vaddr_to_off(e, d.strtab, &stroff) != 0 ||
        !in_file(e, stroff, d.strsz))
        return 0;
    for (uint64_t k = 0; k < d.ndyn && d.dyn[k].d_tag != DT_NULL; k++) {
        uint64_t n = d.dyn[k].d_un.d_val;
        if (d.dyn[k].d_tag != DT_NEEDED || n >= d.strsz)
            continue;
        const char *s = (const char *)e->data + stroff + n;
        size_t room = d.strsz - n;
        if (strnlen(s, room) < room && strncmp(s, prefix, strlen(prefix)) == 0)
            return 1;
    }
    return 0;
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* If s[0..len) ends with a version "3.M.P[abrcN][+]" whose start is the
 * string start or follows a character that is not a digit or '.',
 * returns its start index and minor, else -1. */
static long version_tail(const char *s, size_t len, int *minor)
{
    size_t i = len;

    if (i > 0 && s[i - 1] == '+')
        i--;
    size_t j = i;
    while (j > 0 && is_digit(s[j - 1]))
        j--;
    if (j < i && j > 0 && (s[j - 1] == 'a' || s[j - 1] == 'b' || s[j - 1] == 'c')) {
        j--;
        if (j > 0 && s[j] == 'c' && s[j - 1] == 'r')
            j--;
        i = j;
    }
    size_t p = i;   /* patch digits end at p */
    while (p > 0 && is_digit(s[p - 1]))
        p--;
    if (p == i || p < 2 || s[p - 1] != '.')
        return -1;
    size_t m = p - 1;
    while (m > 0 && is_digit(s[m - 1]))
        m--;
    if (m == p - 1 || m < 2 || s[m - 1] != '.' || s[m - 2] != '3')
        return -1;
    size_t start = m - 2;
    if (start > 0 && (is_digit(s[start - 1]) || s[start - 1] == '.'))
        return -1;
    int mi = 0;
    for (size_t k = m; k < p - 1; k++)
        mi = mi * 10 + (s[k] - '0');
    *minor = mi;
    return (long)start;
}

/* What a version scan found so far. */
typedef struct vscan {
    int minor;           /* wanted minor, or -1 for any */
    char best[32];       /* the first match */
    int n, conflict;     /* matches, and whether any differed from best */
} vscan;

/* Every NUL-terminated string lying wholly inside d[0..n); with cut,
 * d may start inside a string, whose tail is no string of its own. */
static void scan_strings(const char *d, size_t n, vscan *v, int cut)
{
    size_t a = 0, b = 0;
    if (cut) {
        while (b < n && d[b] != '\0')
            b++;
        a = ++b;
    }
    for (; b < n; b++) {
        if (d[b] != '\0')
            continue;
        int mi;
        long st = b - a >= 5 && b - a < 256 ? version_tail(d + a, b - a, &mi) : -1;
        if (st >= 0 && (v->minor < 0 || mi == v->minor) && b - a - (size_t)st < sizeof v->best) {
            char w[32];
            memcpy(w, d + a + st, b - a - (size_t)st);
            w[b - a - (size_t)st] = '\0';
            if (v->n == 0)
                snprintf(v->best, sizeof v->best, "%s", w);
            else if (strcmp(v->best, w) != 0)
                v->conflict = 1;
            v->n++;
        }
        a = b + 1;
    }
}

/* The pages of the read-only, non-executable PT_LOAD segments (where
 * .rodata is) that are in the page cache, in runs.  These are what the
 * running interpreter itself has read, its version string among them
 * once it has started: looking there first costs no disk read, which
 * on a busy disk can take seconds while the program runs unrecorded. */
static void scan_resident(const pyelf *e, vscan *v)
{
    const Elf64_Ehdr *h = ehdr(e);
    const uint64_t pg = 4096;
    unsigned char vec[256];

    for (int i = 0; i < h->e_phnum; i++) {
        const Elf64_Phdr *p = phdr(e, i);
        if (!p || p->p_type != PT_LOAD || (p->p_flags & (PF_W | PF_X)) || !(p->p_flags & PF_R) ||
            !in_file(e, p->p_offset, p->p_filesz))
            continue;
        uint64_t lo = p->p_offset & ~(pg - 1), end = p->p_offset + p->p_filesz;
        uint64_t run = UINT64_MAX;   /* start of the current resident run */
        for (uint64_t at = lo; at < end; at += sizeof vec * pg) {
            uint64_t len = end - at < sizeof vec * pg ? end - at : sizeof vec * pg;
            size_t npg = (size_t)((len + pg - 1) / pg);
            if (mincore((void *)(e->data + at), (size_t)len, vec) != 0)
                memset(vec, 0, npg);   /* unknown: treat as not resident */
            for (size_t k = 0; k <= npg; k++) {
                int in = k < npg && (vec[k] & 1);
                uint64_t here = at + k * pg;
                if (in && run == UINT64_MAX)
                    run = here;
                if (!in && run != UINT64_MAX && (k < npg || here >= end)) {
                    uint64_t a = run < p->p_offset ? p->p_offset : run;
                    uint64_t b = here < end ? here : end;
                    scan_strings((const char *)e->data + a, (size_t)(b - a), v, a != p->p_offset);
                    run = UINT64_MAX;
                }
            }
        }
    }
}

/* Answers of scan_file, by file and minor (a small ring: a recorder
 * meets a handful of interpreters). */
typedef struct vmemo {
    uint64_t dev, ino, size, mtime_ns;
    int minor, ok;
    char version[32];
} vmemo;

#define VMEMO_N 8
static vmemo vmemo_v[VMEMO_N];
static unsigned vmemo_next;
static pthread_mutex_t vmemo_lock = PTHREAD_MUTEX_INITIALIZER;

static int vmemo_same(const vmemo *m, const pyelf *e, int minor)
{
    return m->ino && m->dev == e->dev && m->ino == e->ino && m->size == e->size &&
           m->mtime_ns == e->mtime_ns && m->minor == minor;
}

static int scan_file(const pyelf *e, int minor, char *out, size_t outlen);

int pyelf_version_string(const pyelf *e, int minor, char *out, size_t outlen)
{
    if (!e->ino || e->no_memo || e->no_resident_scan)
        return scan_file(e, minor, out, outlen);
    pthread_mutex_lock(&vmemo_lock);
    for (unsigned i = 0; i < VMEMO_N; i++) {
        const vmemo *m = &vmemo_v[i];
        if (vmemo_same(m, e, minor)) {
            int ok = m->ok;
            if (ok)
                snprintf(out, outlen, "%s", m->version);
            pthread_mutex_unlock(&vmemo_lock);
            return ok ? 0 : -1;
        }
    }
    pthread_mutex_unlock(&vmemo_lock);
    char v[32];
    int rc = scan_file(e, minor, v, sizeof v);
    pthread_mutex_lock(&vmemo_lock);
    vmemo *m = &vmemo_v[vmemo_next++ % VMEMO_N];
    *m = (vmemo){ e->dev, e->ino, e->size, e->mtime_ns, minor, rc == 0, "" };
    if (rc == 0)
        snprintf(m->version, sizeof m->version, "%s", v);
    pthread_mutex_unlock(&vmemo_lock);
    if (rc == 0)
        snprintf(out, outlen, "%s", v);
    return rc;
}

static int scan_file(const pyelf *e, int minor, char *out, size_t outlen)
{
    const Elf64_Ehdr *h = ehdr(e);
    vscan v = { .minor = minor };

    /* A version of a known minor, found in resident pages with no other
     * candidate there, is taken as it is; anything else is decided by
     * the whole scan below. */
    if (minor >= 0 && !e->no_resident_scan) {
        scan_resident(e, &v);
        if (v.n > 0 && !v.conflict) {
            snprintf(out, outlen, "%s", v.best);
            return 0;
        }
        memset(&v, 0, sizeof v);
        v.minor = minor;
    }
    for (unsigned i = 0; i < h->e_shnum; i++) {
        const Elf64_Shdr *s = shdr(e, i);
        if (!s || s->sh_type != SHT_PROGBITS || (s->sh_flags & (SHF_WRITE | SHF_EXECINSTR)) ||
            !(s->sh_flags & SHF_ALLOC) || !in_file(e, s->sh_offset, s->sh_size))
            continue;
        scan_strings((const char *)e->data + s->sh_offset, (size_t)s->sh_size, &v, 0);
    }
    if (v.n == 0 || (v.conflict && minor < 0))
        return -1;
    snprintf(out, outlen, "%s", v.best);
    return 0;
}
